import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { OutboxRelayService } from '../../../src/core/webhooks/outbox-relay.service.js';
import { WebhookLogRepository } from '../../../src/data/repositories/webhook-log.repository.js';
import { WebhookSubscriptionRepository } from '../../../src/data/repositories/webhook-subscription.repository.js';
import { WebhookAttemptRepository } from '../../../src/data/repositories/webhook-attempt.repository.js';

const T = 'relayburst';

/**
 * A burst of announcements (telemetry announces every stored batch) on real MongoDB-wire storage: the
 * relay runs at most twice per tenant however many callers announce during a run (it queued one run
 * per call before, without bound), and every caller's call resolves. That the queued run publishes
 * what was written before it started is test/integration/webhooks/webhooks.test.ts's.
 */
describe('outbox relay under a burst of announcements', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
    await node.services.tenants.ensure({ name: T, displayName: 'Relay burst' });
  });
  afterAll(async () => node?.destroy());

  it('runs once more for all the calls made during a run, and every call resolves', async () => {
    const db = (t: string) => node.infra.mongo.tenantDb(t);
    let reads = 0;
    let holdFirst: (() => void) | undefined;
    const firstHeld = new Promise<void>((resolve) => (holdFirst = resolve));
    let releaseFirst: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (releaseFirst = resolve));
    const relay = new OutboxRelayService({
      log: (t) => {
        const real = new WebhookLogRepository(db(t));
        return Object.assign(Object.create(real) as WebhookLogRepository, {
          pending: async (limit: number) => {
            reads += 1;
            if (reads === 1) {
              holdFirst?.();
              await released;
            }
            return real.pending(limit);
          },
        });
      },
      subscriptions: (t) => new WebhookSubscriptionRepository(db(t)),
      attempts: (t) => new WebhookAttemptRepository(db(t)),
      tenants: async () => [T],
      enqueue: async () => undefined,
      retentionHours: 24,
      sweepMs: 60_000,
      logger: node.infra.logger,
    });

    const first = relay.publish(T);
    await firstHeld;
    // 40 callers announce while the first run reads the outboxes: they all join one queued run.
    const burst = Array.from({ length: 40 }, () => relay.publish(T));
    releaseFirst();
    await first;
    await expect(Promise.all(burst)).resolves.toHaveLength(40);
    expect(reads).toBe(2);
    // A call after both ended runs again (nothing is left joined to a finished run).
    await relay.publish(T);
    expect(reads).toBe(3);
  });
});
