import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { OutboxRelayService } from '../../../src/core/webhooks/outbox-relay.service.js';
import { announce } from '../../../src/core/webhooks/webhook-events.js';
import { WebhookLogRepository } from '../../../src/data/repositories/webhook-log.repository.js';
import { WebhookSubscriptionRepository } from '../../../src/data/repositories/webhook-subscription.repository.js';
import { WebhookAttemptRepository } from '../../../src/data/repositories/webhook-attempt.repository.js';

/**
 * A writer that names the documents it announced in (telemetry names every stored batch's records)
 * has the relay read those by `_id` instead of looking through every outbox collection (a scan of
 * all telemetry on servers without secondary indexes). Calls made during a run merge what they name
 * into the one queued run; a call that names nothing makes that run look for every outbox.
 */
describe('outbox relay reading the documents its callers name', () => {
  let node: TestNode;
  let n = 0;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
  });
  afterAll(async () => node?.destroy());

  const setup = async () => {
    const tenant = `relayhint${++n}`;
    await node.services.tenants.ensure({ name: tenant, displayName: tenant });
    const db = node.infra.mongo.tenantDb(tenant);
    let scans = 0;
    let reads = 0;
    let hold: Promise<void> | undefined;
    let holding: (() => void) | undefined;
    const relay = new OutboxRelayService({
      log: (t) => {
        const real = new WebhookLogRepository(node.infra.mongo.tenantDb(t));
        const held = async () => {
          holding?.();
          await hold;
        };
        return Object.assign(Object.create(real) as WebhookLogRepository, {
          pending: async (limit: number) => {
            scans += 1;
            await held();
            return real.pending(limit);
          },
          pendingIn: async (written: Parameters<WebhookLogRepository['pendingIn']>[0]) => {
            reads += 1;
            await held();
            return real.pendingIn(written);
          },
        });
      },
      subscriptions: (t) => new WebhookSubscriptionRepository(node.infra.mongo.tenantDb(t)),
      attempts: (t) => new WebhookAttemptRepository(node.infra.mongo.tenantDb(t)),
      tenants: async () => [tenant],
      enqueue: async () => undefined,
      retentionHours: 24,
      sweepMs: 60_000,
      logger: node.infra.logger,
    });
    const eventId = new Types.ObjectId();
    /** A telemetry record carrying one announcement, as the ingest stores it. */
    const record = async (seq: number) => {
      const _id = `conf-${tenant}:${seq}`;
      const outbox = [announce('participant.joined', String(eventId), { seq })];
      await db.models.TelemetryRecord.collection.insertOne({
        _id: _id as never,
        conferenceId: `conf-${tenant}`,
        sequence: seq,
        eventId,
        type: 'participant_joined',
        occurredAt: new Date(),
        payload: { participantKey: `p${seq}` },
        outbox,
        createdAt: new Date(),
      });
      lastOutbox = outbox;
      return _id;
    };
    let lastOutbox: ReturnType<typeof announce>[] = [];
    const logged = async () =>
      (await db.models.WebhookEvent.find({}).sort({ _id: 1 }).lean()).map(
        (d) => (d as unknown as { data: { seq: number } }).data.seq,
      );
    /** Holds the next read of outboxes until `release` is called; resolves once that read started. */
    const holdNextRead = () => {
      let release: () => void = () => undefined;
      hold = new Promise<void>((r) => (release = r));
      const started = new Promise<void>((r) => (holding = r));
      return {
        started,
        release: () => {
          holding = undefined;
          release();
          hold = undefined;
        },
      };
    };
    const pendingLeft = () => db.models.TelemetryRecord.countDocuments({ 'outbox.0': { $exists: true } });
    return {
      tenant,
      relay,
      record,
      logged,
      holdNextRead,
      pendingLeft,
      scans: () => scans,
      reads: () => reads,
      outboxOfLast: () => lastOutbox,
    };
  };

  it('publishes the named documents without looking through the outboxes, and leaves the others to a full run', async () => {
    const { tenant, relay, record, logged, scans } = await setup();
    const a = await record(1);
    await record(2);
    expect(await relay.publish(tenant, { source: 'TelemetryRecord', ids: [a] })).toBe(1);
    expect(await logged()).toEqual([1]);
    expect(scans()).toBe(0);
    expect(await relay.publish(tenant)).toBe(1);
    expect(await logged()).toEqual([1, 2]);
    expect(scans()).toBe(1);
  });

  it('merges what the calls during a run name into the one run queued behind it', async () => {
    const { tenant, relay, record, logged, holdNextRead, scans } = await setup();
    const first = holdNextRead();
    const running = relay.publish(tenant, { source: 'TelemetryRecord', ids: [await record(1)] });
    await first.started;
    const later = [
      relay.publish(tenant, { source: 'TelemetryRecord', ids: [await record(2)] }),
      relay.publish(tenant, { source: 'TelemetryRecord', ids: [await record(3), await record(4)] }),
    ];
    await record(5); // written by another node: named to none of these calls
    first.release();
    expect(await running).toBe(1);
    expect(await Promise.all(later)).toEqual([3, 3]);
    expect(await logged()).toEqual([1, 2, 3, 4]);
    expect(scans()).toBe(0);
  });

  it('looks through every outbox in the queued run when one of its calls names nothing', async () => {
    const { tenant, relay, record, logged, holdNextRead, scans } = await setup();
    const first = holdNextRead();
    const running = relay.publish(tenant, { source: 'TelemetryRecord', ids: [await record(1)] });
    await first.started;
    const later = [relay.publish(tenant, { source: 'TelemetryRecord', ids: [await record(2)] }), relay.publish(tenant)];
    await record(3);
    first.release();
    await running;
    expect(await Promise.all(later)).toEqual([2, 2]);
    expect(await logged()).toEqual([1, 2, 3]);
    expect(scans()).toBe(1);
  });

  it('publishes the entries a writer gave with the documents without reading them', async () => {
    const { tenant, relay, record, logged, pendingLeft, scans, reads, outboxOfLast } = await setup();
    const a = await record(1);
    const given = outboxOfLast();
    const b = await record(2);
    expect(
      await relay.publish(tenant, { source: 'TelemetryRecord', ids: [a, b], outboxes: [given, outboxOfLast()] }),
    ).toBe(2);
    expect(await logged()).toEqual([1, 2]);
    expect(await pendingLeft()).toBe(0);
    expect(reads()).toBe(0);
    expect(scans()).toBe(0);
  });

  it('takes page after page when it looks for every entry, until a page is not full', async () => {
    const { tenant, relay, logged, pendingLeft, scans } = await setup();
    const db = node.infra.mongo.tenantDb(tenant);
    const eventId = new Types.ObjectId();
    const docs = Array.from({ length: 1100 }, (_, i) => ({
      _id: `bulk-${tenant}:${i}`,
      conferenceId: `bulk-${tenant}`,
      sequence: i,
      eventId,
      type: 'participant_joined',
      occurredAt: new Date(),
      payload: {},
      outbox: [announce('participant.joined', String(eventId), { seq: i }, new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)))],
      createdAt: new Date(),
    }));
    await db.models.TelemetryRecord.collection.insertMany(docs as never[]);
    expect(await relay.publish(tenant)).toBe(1100);
    expect(await pendingLeft()).toBe(0);
    expect(await logged()).toEqual(docs.map((_, i) => i));
    expect(scans()).toBe(3);
  });
});
