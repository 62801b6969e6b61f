import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorSystemOf, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ChildNode } from '../../support/child-node.js';
import { startHubPair } from '../../support/cluster.js';
import { request } from '../../support/http.js';
import type { TestNode } from '../../support/node.js';
import { call, must, recorder } from '../../support/hub-client.js';

const SHARDS = 16;

/**
 * Consent-gated recording of issue 20 (decision 910) on two nodes with real socket.io clients: the
 * recording starts only when everyone asked agreed; a refusal or a timeout cancels and tells the host
 * who; a late joiner is held until they agree; a patients-only policy asks the patients; answers are
 * stored with the event and audited; an open request survives a SIGKILL of the meeting's owner node.
 */
describe('consent-gated recording across two nodes', () => {
  let pair: Awaited<ReturnType<typeof startHubPair>>;
  let node: TestNode;
  let child: ChildNode;
  let childId: string;
  let ids: Record<string, string>;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    pair = await startHubPair(
      [
        ['alice', 'clinician'],
        ['bob', 'clinician'],
        ['pat', 'patient'],
        ['quinn', 'patient'],
        ['rita', 'patient'],
      ] as const,
      { childName: 'consent-child', shards: SHARDS },
    );
    ({ node, child, childId, ids, tokens } = pair);
  }, 90_000);
  afterAll(async () => pair?.destroy());

  async function policy(recordingConsent: string, recordingConsentTimeoutSeconds = 120): Promise<void> {
    const { db } = await node.services.tenants.require('acme');
    const r = await db.models.TenantConfig.updateOne(
      { _id: 'tenant' },
      {
        $set: {
          'meetings.recordingConsent': recordingConsent,
          'meetings.recordingConsentTimeoutSeconds': recordingConsentTimeoutSeconds,
        },
      },
    ).exec();
    expect(r.matchedCount).toBe(1);
  }

  const on = (url: string, user: string) => pair.on(url, user);
  const rest = (url: string, user: string, method: string, path: string, body?: unknown) =>
    pair.rest(url, user, method, path, body);

  /** An event of alice's (bob and pat invited, plus `more`); `onChild` places its meeting actor on the child node. */
  async function newEvent(
    onChild: boolean,
    more: string[] = [],
    waitingRoom = false,
  ): Promise<{ eventId: string; code: string }> {
    const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
    const nodes = [node.config.nodeId, childId].sort();
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const e = await node.services.events.create(host, {
        name: `Recorded clinic ${i}`,
        startAt: new Date(now).toISOString(),
        endAt: new Date(now + 3_600_000).toISOString(),
        participants: ['bob', 'pat', ...more].map((u) => ({ userId: ids[u]!, role: 'participant' as const })),
        attachments: [],
        waitingRoom,
      });
      const eventId = String(e._id);
      const owner = rendezvousOwner(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS), nodes);
      if ((owner === childId) === onChild) return { eventId, code: e.meetingCode };
    }
    throw new Error('no event placed as wanted');
  }

  /** alice (node) starts the meeting; bob and pat (child node) join it. */
  async function meeting(onChild = false, more: string[] = [], waitingRoom = false) {
    const ev = await newEvent(onChild, more, waitingRoom);
    const [alice, bob, pat] = [await on(node.url!, 'alice'), await on(child.url, 'bob'), await on(child.url, 'pat')];
    const [ra, rb, rp] = [recorder(alice), recorder(bob), recorder(pat)];
    await must(alice, 'initEvent', { eventId: ev.eventId });
    await must(bob, 'joinEvent', { eventId: ev.eventId });
    await must(pat, 'joinEvent', { eventId: ev.eventId });
    return { ...ev, alice, bob, pat, ra, rb, rp };
  }

  it('starts the recording only once everyone present said yes, once, and stores and audits each answer', async () => {
    await policy('all');
    const { eventId, alice, bob, ra, rb, rp } = await meeting();
    const asked = await must(alice, 'startRecording', { eventId, requestId: 'rec-1', reason: 'teaching file' });
    expect(asked.recording.active).toBe(false);
    expect(asked.recordingConsent).toMatchObject({ requestId: 'rec-1', state: 'pending', policy: 'all' });
    expect(asked.recordingConsent.required.map((q: { userId: string }) => q.userId).sort()).toEqual(
      [ids.alice, ids.bob, ids.pat].sort(),
    );
    expect(await rb.next('recordingConsentRequested')).toMatchObject({
      eventId,
      requestId: 'rec-1',
      required: true,
      reason: 'teaching file',
    });
    expect(await rp.next('recordingConsentRequested')).toMatchObject({ requestId: 'rec-1', required: true });
    // The REST start cannot go around the consent: it is the same turn, and answers the open request.
    const bypass = await rest(node.url!, 'alice', 'GET', `/api/tenant/startrecording?eventId=${eventId}`);
    expect(bypass.status).toBe(200);
    expect(bypass.body).toMatchObject({
      eventId,
      state: 'awaiting_consent',
      recordingConsent: { requestId: 'rec-1', state: 'pending' },
    });
    expect((await node.services.recording.status('acme', eventId)).state).toBe('idle');

    const afterBob = await must(bob, 'consentToRecording', { eventId, requestId: 'rec-1', consent: true });
    expect(afterBob).toMatchObject({ state: 'pending', consent: true });
    expect((await node.services.recording.status('acme', eventId)).state).toBe('idle');
    const byRest = await rest(child.url, 'pat', 'POST', `/api/meetings/${eventId}/recording-consent`, {
      requestId: 'rec-1',
      consent: true,
    });
    expect(byRest.status).toBe(200);
    expect(byRest.body).toMatchObject({ requestId: 'rec-1', state: 'granted' });
    expect(await ra.next('recordingConsentResult')).toMatchObject({
      requestId: 'rec-1',
      outcome: 'granted',
      refusedBy: [],
    });
    await ra.next('meetingEvent', (e) => e.type === 'recordingStarted');
    const status = await node.services.recording.status('acme', eventId);
    expect(status).toMatchObject({ session: 1 });
    expect(['starting', 'recording']).toContain(status.state);
    // A retried start and a repeated answer change nothing: never a second recording.
    // (the same request id replays its first answer; another start finds the recording running).
    expect(await must(alice, 'startRecording', { eventId, requestId: 'rec-1', reason: 'teaching file' })).toEqual(
      asked,
    );
    expect((await must(alice, 'startRecording', { eventId })).recording.active).toBe(true);
    expect(await must(bob, 'consentToRecording', { eventId, requestId: 'rec-1', consent: true })).toMatchObject({
      state: 'granted',
    });
    expect(await call(bob, 'consentToRecording', { eventId, requestId: 'rec-1', consent: false })).toMatchObject({
      ok: false,
      error: { code: 'consent_already_given' },
    });
    expect((await node.services.recording.status('acme', eventId)).session).toBe(1);
    const types = ra.of('meetingEvent').map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t === 'recordingStarted')).toHaveLength(1);
    expect(types).toEqual(
      expect.arrayContaining(['recordingConsentRequested', 'recordingConsentAnswered', 'recordingConsentGranted']),
    );

    // Stored with the event (who, when, what was asked, the answer) and shown in its details.
    const details = await rest(node.url!, 'alice', 'GET', `/api/events/get/${eventId}`);
    expect(details.status).toBe(200);
    const consents = details.body.recordingConsents as { userId: string; consent: boolean; implicit: boolean }[];
    expect(consents).toHaveLength(3);
    expect(consents.map((c) => c.userId).sort()).toEqual([ids.alice, ids.bob, ids.pat].sort());
    expect(consents.every((c) => c.consent)).toBe(true);
    expect(details.body.recordingConsents[0]).toMatchObject({
      requestId: 'rec-1',
      userId: ids.alice,
      implicit: true,
      question: expect.any(String),
      reason: 'teaching file',
      policy: 'all',
      at: expect.any(String),
    });
    const audit = await node.services.auth.audit.list('acme', { action: 'recording.consent', eventId });
    expect(audit.map((a) => a.actorId).sort()).toEqual([ids.alice, ids.bob, ids.pat].sort());
    expect(audit.every((a) => a.details?.requestId === 'rec-1' && a.details?.consent === true)).toBe(true);
  });

  it('one refusal cancels the request and tells the host who refused', async () => {
    await policy('all');
    const { eventId, alice, bob, pat, ra } = await meeting();
    await must(alice, 'startRecording', { eventId, requestId: 'rec-2' });
    await must(bob, 'consentToRecording', { eventId, requestId: 'rec-2', consent: true });
    expect(await must(pat, 'consentToRecording', { eventId, requestId: 'rec-2', consent: false })).toMatchObject({
      state: 'refused',
    });
    expect(await ra.next('recordingConsentResult')).toMatchObject({
      requestId: 'rec-2',
      outcome: 'refused',
      refusedBy: [{ userId: ids.pat, username: 'pat' }],
    });
    expect(await ra.next('meetingEvent', (e) => e.type === 'recordingConsentRefused')).toMatchObject({
      data: { refusedBy: [ids.pat] },
    });
    expect((await must(alice, 'getMeetingDetails', { eventId })).recording.active).toBe(false);
    expect((await node.services.recording.status('acme', eventId)).state).toBe('idle');
    expect(ra.of('meetingEvent').some((e: { type: string }) => e.type === 'recordingStarted')).toBe(false);
    const details = await rest(node.url!, 'alice', 'GET', `/api/events/get/${eventId}`);
    expect(details.body.recordingConsents).toEqual(
      expect.arrayContaining([expect.objectContaining({ userId: ids.pat, consent: false, requestId: 'rec-2' })]),
    );
    // A request open when a host ends the meeting can no longer start anything.
    await must(alice, 'startRecording', { eventId, requestId: 'rec-2b' });
    await must(bob, 'consentToRecording', { eventId, requestId: 'rec-2b', consent: true });
    await must(alice, 'endMeeting', { eventId, reason: 'done' });
    expect(await call(pat, 'consentToRecording', { eventId, requestId: 'rec-2b', consent: true })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state' },
    });
    expect((await node.services.recording.status('acme', eventId)).state).toBe('idle');
  });

  it('a request nobody answers in time is cancelled and the host learns who did not answer', async () => {
    await policy('all', 1);
    const { eventId, alice, ra } = await meeting();
    await must(alice, 'startRecording', { eventId, requestId: 'rec-3' });
    const result = await ra.next('recordingConsentResult');
    expect(result).toMatchObject({ requestId: 'rec-3', outcome: 'timedOut', refusedBy: [] });
    expect(result.unanswered.map((u: { userId: string }) => u.userId).sort()).toEqual([ids.bob, ids.pat].sort());
    expect((await must(alice, 'getMeetingDetails', { eventId })).recordingConsent).toMatchObject({ state: 'timedOut' });
    expect((await node.services.recording.status('acme', eventId)).state).toBe('idle');
  });

  it('someone joining while the recording runs is told, held out of the meeting, and enters once they agree', async () => {
    await policy('all');
    const { eventId, code, alice, bob, pat, ra } = await meeting(false, ['quinn']);
    await must(alice, 'startRecording', { eventId, requestId: 'rec-4' });
    await must(bob, 'consentToRecording', { eventId, requestId: 'rec-4', consent: true });
    await must(pat, 'consentToRecording', { eventId, requestId: 'rec-4', consent: true });
    await ra.next('meetingEvent', (e) => e.type === 'recordingStarted');

    const quinn = await on(node.url!, 'quinn');
    const rq = recorder(quinn);
    const held = await must(quinn, 'joinEvent', { eventId });
    expect(held).toMatchObject({
      status: 'consentRequired',
      eventId,
      recordingConsent: { late: true, required: true },
    });
    expect(held.join).toBeUndefined();
    const ask = await rq.next('recordingConsentRequested');
    expect(ask.requestId).toBe(held.recordingConsent.requestId);
    // Held: not a member, not in the meeting room.
    await must(alice, 'notify', 'ping-1', { eventId });
    await ra.next('meetingEvent', (e) => e.type === 'notify' && e.data?.action === 'ping-1');
    expect(rq.of('meetingEvent').some((e: { type: string }) => e.type === 'notify')).toBe(false);
    const before = await must(alice, 'getMeetingDetails', { eventId });
    expect(before.members.map((m: { userId: string }) => m.userId)).not.toContain(ids.quinn);
    expect(before.recordingConsent.held).toEqual([expect.objectContaining({ userId: ids.quinn })]);

    const yes = await must(quinn, 'consentToRecording', {
      eventId,
      requestId: held.recordingConsent.requestId,
      consent: true,
    });
    expect(yes).toMatchObject({ state: 'granted', entered: { eventId, join: { token: expect.any(String) } } });
    expect(await rq.next('waitingRoom', (p) => p.state === 'admitted')).toMatchObject({ eventId });
    await must(alice, 'notify', 'ping-2', { eventId });
    expect(await rq.next('meetingEvent', (e) => e.type === 'notify')).toMatchObject({ data: { action: 'ping-2' } });

    // A guest by code who refuses stays out.
    const rita = await on(child.url, 'rita');
    const byCode = await rest(child.url, 'rita', 'POST', `/api/meetings/join/${code}`);
    expect(byCode.body).toMatchObject({ status: 'consentRequired', recordingConsent: { late: true } });
    const no = await must(rita, 'consentToRecording', {
      eventId,
      requestId: byCode.body.recordingConsent.requestId,
      consent: false,
    });
    expect(no).toMatchObject({ state: 'refused' });
    const after = await must(alice, 'getMeetingDetails', { eventId });
    expect(after.members.map((m: { userId: string }) => m.userId)).toContain(ids.quinn);
    expect(after.members.map((m: { userId: string }) => m.userId)).not.toContain(ids.rita);
    expect(after.recordingConsent.held).toEqual([]);
    const stored = (await rest(node.url!, 'alice', 'GET', `/api/events/get/${eventId}`)).body.recordingConsents;
    expect(stored).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ userId: ids.quinn, consent: true, late: true }),
        expect.objectContaining({ userId: ids.rita, consent: false, late: true }),
      ]),
    );
  });

  it('a guest a host admits from the waiting room while the recording runs is held until they agree', async () => {
    await policy('all');
    const { eventId, code, alice, bob, pat, ra } = await meeting(false, [], true);
    const rita = await on(child.url, 'rita');
    const rr = recorder(rita);
    expect((await rest(child.url, 'rita', 'POST', `/api/meetings/join/${code}`)).body).toMatchObject({
      status: 'waiting',
    });
    await must(alice, 'startRecording', { eventId, requestId: 'rec-7' });
    await must(bob, 'consentToRecording', { eventId, requestId: 'rec-7', consent: true });
    await must(pat, 'consentToRecording', { eventId, requestId: 'rec-7', consent: true });
    await ra.next('meetingEvent', (e) => e.type === 'recordingStarted');

    const admitted = await must(alice, 'admit', { eventId, userId: ids.rita });
    expect(admitted).toMatchObject({ admitted: [], held: [ids.rita], waiting: [] });
    const ask = await rr.next('recordingConsentRequested', (p) => p.late === true);
    expect(
      (await must(alice, 'getMeetingDetails', { eventId })).members.map((m: { userId: string }) => m.userId),
    ).not.toContain(ids.rita);
    const yes = await must(rita, 'consentToRecording', { eventId, requestId: ask.requestId, consent: true });
    expect(yes).toMatchObject({ state: 'granted', entered: { eventId, join: { token: expect.any(String) } } });
    expect(await rr.next('waitingRoom', (p) => p.state === 'admitted')).toMatchObject({ eventId });
    expect(
      (await must(alice, 'getMeetingDetails', { eventId })).members.map((m: { userId: string }) => m.userId),
    ).toContain(ids.rita);
  });

  it('under the patients-only policy only the patients are asked', async () => {
    await policy('patients');
    const { eventId, alice, bob, pat, ra, rb } = await meeting();
    const asked = await must(alice, 'startRecording', { eventId, requestId: 'rec-5' });
    expect(asked.recordingConsent.required.map((q: { userId: string }) => q.userId)).toEqual([ids.pat]);
    expect(await rb.next('recordingConsentRequested')).toMatchObject({ requestId: 'rec-5', required: false });
    expect(await call(bob, 'consentToRecording', { eventId, requestId: 'rec-5', consent: false })).toMatchObject({
      ok: false,
      error: { code: 'consent_not_required' },
    });
    // pat answers through GraphQL (the same actor turn as the hub's consentToRecording).
    const gql = await request(node.url!, 'POST', '/graphql', {
      tenant: 'acme',
      token: tokens.pat,
      body: {
        query: `mutation { consentToRecording(eventId: "${eventId}", requestId: "rec-5", consent: true) { eventId state consent } }`,
      },
    });
    expect(gql.body.data.consentToRecording).toEqual({ eventId, state: 'granted', consent: true });
    expect(pat.connected).toBe(true);
    await ra.next('meetingEvent', (e) => e.type === 'recordingStarted');
    expect((await node.services.recording.status('acme', eventId)).session).toBe(1);
  });

  it('keeps an open consent request across a SIGKILL of the node owning the meeting', async () => {
    await policy('all');
    const { eventId, alice, bob, ra } = await meeting(true);
    const system = actorSystemOf(node.roles);
    await must(alice, 'startRecording', { eventId, requestId: 'rec-6' });
    await must(bob, 'consentToRecording', { eventId, requestId: 'rec-6', consent: true });
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(childId);

    await child.kill();

    // pat's socket died with the child; pat answers over REST to the surviving node.
    const after = await must(alice, 'getMeetingDetails', { eventId });
    expect(after.recordingConsent).toMatchObject({ requestId: 'rec-6', state: 'pending' });
    expect(after.recordingConsent.required.find((q: { userId: string }) => q.userId === ids.bob)).toMatchObject({
      consent: true,
    });
    const pat = await rest(node.url!, 'pat', 'POST', `/api/meetings/${eventId}/recording-consent`, {
      requestId: 'rec-6',
      consent: true,
    });
    expect(pat.body).toMatchObject({ state: 'granted' });
    await ra.next('meetingEvent', (e) => e.type === 'recordingStarted');
    expect((await node.services.recording.status('acme', eventId)).session).toBe(1);
    expect(ra.of('meetingEvent').filter((e: { type: string }) => e.type === 'recordingStarted')).toHaveLength(1);
  });
});
