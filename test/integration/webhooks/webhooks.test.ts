import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { QueueEvents } from 'bullmq';
import { duplicateRedis, type RedisClient } from '../../../src/data/redis.js';
import { Webhook } from 'standardwebhooks';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { inHours } from '../../support/events.js';
import { request } from '../../support/http.js';
import { startReceiver, type Receiver, type Received } from '../../support/webhook-receiver.js';
import { WEBHOOK_EVENT_TYPES } from '../../../src/core/webhooks/webhook-events.js';
import { newSigningSecret } from '../../../src/core/webhooks/webhook-signature.js';
import { Types } from 'mongoose';
import { TelemetryRepository } from '../../../src/data/repositories/telemetry.repository.js';

const T = 'acme';

/** Types per consultation in arrival order, first delivery of each id only. */
function byConsultation(list: Received[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of list) {
    const c = String(r.payload.data.consultationId ?? '-');
    out.set(c, [...(out.get(c) ?? []), r.payload.type]);
  }
  return out;
}

describe('outbound events (webhooks)', () => {
  let node: TestNode;
  let admin: string;
  let doc: string;
  let docId: string;
  let events: QueueEvents;
  let eventsConn: RedisClient;
  const receivers: Receiver[] = [];

  const api = (method: string, path: string, body?: unknown, token = admin) =>
    request(node.url!, method, path, { tenant: T, token, ...(body !== undefined ? { body } : {}) });

  async function receiver(opts: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
    const r = await startReceiver(opts);
    receivers.push(r);
    return r;
  }

  async function subscribe(r: Receiver, types: readonly string[] = WEBHOOK_EVENT_TYPES) {
    const res = await api('POST', '/api/webhooks/subscriptions', { url: r.url, types });
    expect(res.status).toBe(201);
    r.setSecrets([res.body.secret]);
    return res.body as { subscription: { id: string }; secret: string };
  }

  async function createEvent(name: string): Promise<string> {
    const res = await api(
      'POST',
      '/api/events/create',
      { name, startAt: inHours(1), endAt: inHours(2), participants: [] },
      doc,
    );
    expect(res.status).toBe(201);
    return String(res.body.id ?? res.body.eventId ?? res.body._id);
  }

  /** Resolves with the outcome of the next delivery run of `subscriptionId` that ends in one of `outcomes`. */
  function runEnding(subscriptionId: string, outcomes: string[]): Promise<string> {
    return new Promise((resolve) => {
      const on = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
        const out = (returnvalue as { outcome?: string } | undefined)?.outcome;
        if (jobId.includes(subscriptionId) && out && outcomes.includes(out)) {
          events.off('completed', on as never);
          resolve(out);
        }
      };
      events.on('completed', on as never);
    });
  }

  beforeAll(async () => {
    node = await startTestNode({
      ROLES: 'http,actors,workers',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_SWEEP_MS: '300',
      WEBHOOK_BACKOFF_MS: '50',
      WEBHOOK_BACKOFF_MAX_MS: '400',
      WEBHOOK_PAUSE_AFTER_FAILURES: '4',
      WEBHOOK_TIMEOUT_MS: '3000',
      JOBS_BACKOFF_MS: '50',
    });
    await createUser(node, T, { username: 'admin', role: 'admin' });
    docId = await createUser(node, T, { username: 'doc', role: 'clinician' });
    admin = await tokenFor(node, T, 'admin');
    doc = await tokenFor(node, T, 'doc');
    eventsConn = duplicateRedis(node.infra.redis, { maxRetriesPerRequest: null });
    events = new QueueEvents('webhooks', { connection: eventsConn, prefix: node.infra.keys.queuePrefix });
    await events.waitUntilReady();
  });
  afterEach(async () => {
    // Each test's subscriptions end with it, so later tests' receivers hear only their own.
    const list = await api('GET', '/api/webhooks/subscriptions');
    for (const s of list.body.subscriptions ?? []) await api('POST', `/api/webhooks/subscriptions/${s.id}/delete`);
  });
  afterAll(async () => {
    await events?.close();
    await eventsConn?.quit();
    for (const r of receivers) await r.close();
    await node?.destroy();
  });

  it('lets tenant administrators manage subscriptions, and nobody else', async () => {
    const r = await receiver();
    const refused = await api('POST', '/api/webhooks/subscriptions', { url: r.url, types: ['media.uploaded'] }, doc);
    expect(refused.status).toBe(403);
    expect((await api('GET', '/api/webhooks/subscriptions', undefined, doc)).status).toBe(403);
    expect((await api('GET', '/api/webhooks/events', undefined, doc)).status).toBe(403);

    const bad = await api('POST', '/api/webhooks/subscriptions', { url: r.url, types: ['no.such'] });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');

    const { subscription, secret } = await subscribe(r, ['consultation.scheduled']);
    expect(secret).toMatch(/^whsec_/);
    const listed = await api('GET', '/api/webhooks/subscriptions');
    expect(listed.body.subscriptions).toEqual([
      expect.objectContaining({ id: subscription.id, url: r.url, status: 'active', types: ['consultation.scheduled'] }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6));

    const paused = await api('POST', `/api/webhooks/subscriptions/${subscription.id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', pausedReason: 'paused by an administrator' });
    const resumed = await api('POST', `/api/webhooks/subscriptions/${subscription.id}/resume`);
    expect(resumed.body.status).toBe('active');
    expect(resumed.body.pausedReason).toBeUndefined();

    const rotated = await api('POST', `/api/webhooks/subscriptions/${subscription.id}/rotateSecret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(secret);
    expect(rotated.body.subscription.secrets).toHaveLength(2);
    expect(rotated.body.subscription.secrets[1].expiresAt).toBeDefined();

    // Both secrets sign while the previous one is in its grace period: either verifies on its own.
    r.setSecrets([secret, rotated.body.secret]);
    await createEvent('after rotation');
    await r.until((l) => l.length >= 1);
    expect(r.received[0]!.verified).toBe(true);
    expect(r.received[0]!.signature.split(' ')).toHaveLength(2);

    const missing = await api('GET', '/api/webhooks/subscriptions/0123456789abcdef01234567');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('webhook_subscription_not_found');
    expect((await api('POST', `/api/webhooks/subscriptions/${subscription.id}/delete`)).status).toBe(200);
    expect((await api('GET', `/api/webhooks/subscriptions/${subscription.id}`)).status).toBe(404);
  });

  it('stores signing secrets sealed under the key-encryption key; a secret left in clear by older code still signs and is sealed', async () => {
    const r = await receiver();
    const { subscription, secret } = await subscribe(r, ['consultation.scheduled']);
    const Sub = node.infra.mongo.tenantDb(T).models.WebhookSubscription;
    const _id = new Types.ObjectId(subscription.id);
    const raw = async () =>
      (await Sub.collection.findOne({ _id })) as unknown as { secrets: { id: string; value: string }[] };
    /** A compact JWE (five parts) that does not carry the secret's key material. */
    const sealed = (v: string, plain: string) =>
      v.split('.').length === 5 && !v.includes(plain.slice(6)) && !v.includes(plain.slice(6, 20));
    expect(sealed((await raw()).secrets[0]!.value, secret)).toBe(true);
    expect(JSON.stringify(await raw())).not.toContain(secret.slice(6, 20));
    await createEvent('sealed at rest');
    await r.until((l) => l.length >= 1);
    expect(r.received[0]!.verified).toBe(true);

    // A subscription written before sealing: its secret in clear signs as before and is then stored sealed.
    const legacy = newSigningSecret();
    await Sub.collection.updateOne(
      { _id },
      { $set: { secrets: [{ id: 'legacy-1', value: legacy, createdAt: new Date() }] } },
    );
    r.setSecrets([legacy]);
    await createEvent('legacy secret');
    await r.until((l) => l.length >= 2);
    expect(r.received[1]!.verified).toBe(true);
    expect((await raw()).secrets).toEqual([expect.objectContaining({ id: 'legacy-1' })]);
    expect(sealed((await raw()).secrets[0]!.value, legacy)).toBe(true);

    // A rotation keeps the previous secret sealed beside the new one, and both still sign.
    const rotated = await api('POST', `/api/webhooks/subscriptions/${subscription.id}/rotateSecret`, {});
    expect(rotated.status).toBe(200);
    const both = (await raw()).secrets;
    expect(both.map((x) => x.id)[1]).toBe('legacy-1');
    expect(sealed(both[0]!.value, rotated.body.secret) && sealed(both[1]!.value, legacy)).toBe(true);
    r.setSecrets([legacy, rotated.body.secret]);
    await createEvent('after rotation, sealed');
    await r.until((l) => l.length >= 3);
    expect(r.received[2]!.verified).toBe(true);
    expect(r.received[2]!.signature.split(' ')).toHaveLength(2);

    // A paused subscription delivers nothing: the sweep's sealing pass seals what it still holds in clear.
    expect((await api('POST', `/api/webhooks/subscriptions/${subscription.id}/pause`)).status).toBe(200);
    const idle = newSigningSecret();
    await Sub.collection.updateOne(
      { _id },
      { $set: { secrets: [{ id: 'legacy-2', value: idle, createdAt: new Date() }] } },
    );
    expect(await node.services.webhooks.subscriptions.sealStoredSecrets(T)).toBe(1);
    expect(sealed((await raw()).secrets[0]!.value, idle)).toBe(true);
    expect(await node.services.webhooks.subscriptions.sealStoredSecrets(T)).toBe(0);
  });

  it('delivers every event once, signed, in order per consultation, with the completion flags', async () => {
    const r = await receiver();
    await subscribe(r);
    const a = await createEvent('A');
    const b = await createEvent('B');
    const c = await createEvent('C');
    expect((await api('POST', '/api/events/cancel', { eventIds: [a, b] }, doc)).status).toBe(200);
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const conf = `conf-${c}`;
    await node.services.telemetry.ingest(T, [
      {
        conferenceId: conf,
        sequence: 1,
        eventId: c,
        type: 'participant_joined',
        occurredAt: at(1),
        payload: { participantKey: 'p1', userId: docId },
      },
      {
        conferenceId: conf,
        sequence: 2,
        eventId: c,
        type: 'chat_activity',
        occurredAt: at(2),
        payload: { messageCount: 3 },
      },
      {
        conferenceId: conf,
        sequence: 3,
        eventId: c,
        type: 'participant_left',
        occurredAt: at(3),
        payload: { participantKey: 'p1' },
      },
      { conferenceId: conf, sequence: 4, eventId: c, type: 'conference_ended', occurredAt: at(4), payload: {} },
    ]);
    // A replayed batch stores nothing and announces nothing.
    await node.services.telemetry.ingest(T, [
      {
        conferenceId: conf,
        sequence: 1,
        eventId: c,
        type: 'participant_joined',
        occurredAt: at(1),
        payload: { participantKey: 'p1', userId: docId },
      },
    ]);
    await r.until((l) => l.some((x) => x.payload.type === 'consultation.completed'));
    await r.until((l) => new Set(l.map((x) => x.id)).size >= 10);

    expect(r.received.every((x) => x.verified)).toBe(true);
    const delivered = r.delivered();
    expect(delivered).toHaveLength(10);
    const seqs = delivered.map((x) => Number(x.payload.sequence));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    const per = byConsultation(delivered);
    expect(per.get(a)).toEqual(['consultation.scheduled', 'consultation.cancelled']);
    expect(per.get(b)).toEqual(['consultation.scheduled', 'consultation.cancelled']);
    // Telemetry started the consultation: its start comes before anything the conference reports.
    expect(per.get(c)).toEqual([
      'consultation.scheduled',
      'consultation.started',
      'participant.joined',
      'participant.left',
      'consultation.ended',
      'consultation.completed',
    ]);
    const started = delivered.find((x) => x.payload.type === 'consultation.started')!;
    expect(started.payload.data).toMatchObject({
      consultationId: c,
      status: 'started',
      startedAt: at(1).toISOString(),
    });
    // A leave names the user its join named (the wire's leave carries only the participant key).
    const left = delivered.find((x) => x.payload.type === 'participant.left')!;
    expect(left.payload.data).toMatchObject({ participantKey: 'p1', userId: docId });
    const completed = delivered.find((x) => x.payload.type === 'consultation.completed')!;
    expect(completed.payload.data).toMatchObject({
      consultationId: c,
      hasLedger: true,
      hasRecording: false,
      hasChat: true,
    });
    // The outboxes are empty once published.
    const db = node.infra.mongo.tenantDb(T);
    // A leave in a later batch (or on another node) finds the join's user in the stored telemetry.
    expect(await new TelemetryRepository(db).joinedUserId(conf, 'p1')).toBe(docId);
    expect(await new TelemetryRepository(db).joinedUserId(conf, 'nobody')).toBeUndefined();
    expect(await db.models.Event.countDocuments({ 'outbox.0': { $exists: true } })).toBe(0);
    expect(await db.models.TelemetryRecord.countDocuments({ 'outbox.0': { $exists: true } })).toBe(0);
  });

  it('retries a failing endpoint with back-off until it recovers, recording every attempt', async () => {
    const r = await receiver({ answer: (n) => (n < 3 ? 500 : 204) });
    const { subscription } = await subscribe(r, ['consultation.scheduled']);
    const ids = [await createEvent('R1'), await createEvent('R2'), await createEvent('R3')];
    await r.until((l) => new Set(l.filter((x) => x.status === 204).map((x) => x.id)).size === 3);
    const delivered = r.delivered();
    expect(delivered.map((x) => x.payload.data.consultationId)).toEqual(ids);
    // The first event was tried four times under one id: a receiver de-duplicates by it.
    expect(r.received.slice(0, 4).map((x) => x.id)).toEqual(Array(4).fill(delivered[0]!.id));

    const attempts = await api('GET', `/api/webhooks/subscriptions/${subscription.id}/attempts`);
    const list = attempts.body.attempts as { ok: boolean; status?: number; latencyMs: number; error?: string }[];
    expect(list.filter((x) => !x.ok)).toHaveLength(3);
    expect(list.filter((x) => !x.ok).every((x) => x.status === 500 && x.error === 'HTTP 500')).toBe(true);
    expect(list.filter((x) => x.ok)).toHaveLength(3);
    expect(list.every((x) => typeof x.latencyMs === 'number')).toBe(true);
    const sub = await api('GET', `/api/webhooks/subscriptions/${subscription.id}`);
    expect(sub.body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
  });

  it('pauses an endpoint after the configured run of failures and says why', async () => {
    const r = await receiver({ answer: () => 503 });
    const { subscription } = await subscribe(r, ['consultation.scheduled']);
    const paused = runEnding(subscription.id, ['paused']);
    await createEvent('P1');
    await paused;
    expect(r.received).toHaveLength(4);
    const sub = await api('GET', `/api/webhooks/subscriptions/${subscription.id}`);
    expect(sub.body).toMatchObject({ status: 'paused', consecutiveFailures: 4, lastError: 'HTTP 503' });
    expect(sub.body.pausedReason).toMatch(/after 4 failed deliveries in a row; last: HTTP 503/);

    // Resumed once the endpoint works again: the event is delivered.
    r.setAnswer(() => 204);
    await api('POST', `/api/webhooks/subscriptions/${subscription.id}/resume`);
    await r.until((l) => l.some((x) => x.status === 204));
    expect(r.delivered()).toHaveLength(1);
  });

  it('lists the log after a cursor and re-delivers a subscription from it', async () => {
    const head = (await api('GET', '/api/webhooks/events?take=1000')).body.head as string;
    const r = await receiver();
    const { subscription } = await subscribe(r, ['consultation.scheduled']);
    const ids = [await createEvent('L1'), await createEvent('L2'), await createEvent('L3')];
    await r.until((l) => l.length >= 3);

    const page = await api('GET', `/api/webhooks/events?after=${head}`);
    expect(page.status).toBe(200);
    const logged = page.body.events as {
      sequence: string;
      id: string;
      type: string;
      data: { consultationId: string };
    }[];
    expect(logged.map((e) => e.data.consultationId)).toEqual(ids);
    expect(logged.map((e) => e.id)).toEqual(r.delivered().map((x) => x.id));
    const second = logged[0]!.sequence;
    const rest = await api('GET', `/api/webhooks/events?after=${second}&take=1`);
    expect(rest.body.events.map((e: { id: string }) => e.id)).toEqual([logged[1]!.id]);
    expect(rest.body.next).toBe(logged[1]!.sequence);
    expect((await api('GET', '/api/webhooks/events?after=abc')).status).toBe(400);

    // Re-delivery from the first event's cursor: exactly the two after it, under the same ids.
    const replay = await api('POST', `/api/webhooks/subscriptions/${subscription.id}/replay`, { after: second });
    expect(replay.status).toBe(200);
    await r.until((l) => l.length >= 5);
    expect(r.received.slice(3).map((x) => x.id)).toEqual([logged[1]!.id, logged[2]!.id]);
    expect(r.received.every((x) => x.verified)).toBe(true);
  });

  it('publishes an announcement a writer left in its outbox at the next sweep', async () => {
    const r = await receiver();
    await subscribe(r, ['media.uploaded', 'import.finished']);
    const db = node.infra.mongo.tenantDb(T);
    // A stored file's announcement: the upload path's repository call with its outbox, as the service makes it.
    const { MediaFileRepository } = await import('../../../src/data/repositories/media-file.repository.js');
    const { announce } = await import('../../../src/core/webhooks/webhook-events.js');
    await new MediaFileRepository(db).createOnce({
      hash: 'a'.repeat(64),
      size: 3,
      contentType: 'image/png',
      fileName: 'x.png',
      extension: 'png',
      ownerId: docId,
      clientRef: 'ref-1',
      kind: 'image',
      thumbnailStatus: 'none',
      outbox: (mediaFileId) => [announce('media.uploaded', undefined, { mediaFileId })],
    });
    // Published by the sweep (nobody called publish): what a crashed writer leaves behind.
    await r.until((l) => l.length >= 1);
    expect(r.received[0]!.payload.type).toBe('media.uploaded');
  });
});
