import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type {
  WebhookSubscriptionRecord,
  WebhookSubscriptionRepository,
} from '../../data/repositories/webhook-subscription.repository.js';
import type { WebhookAttemptRepository } from '../../data/repositories/webhook-attempt.repository.js';
import type { WebhookEventRecord, WebhookLogRepository } from '../../data/repositories/webhook-log.repository.js';
import { oid } from '../../kernel/object-id.js';
import type { OutboundResult } from './outbound-request.js';
import { signedHeaders } from './webhook-signature.js';
import type { WebhookSecrets } from './webhook-secrets.js';

/** Wakes a subscription's delivery: `key` names the job, so the same wake-up is queued once. */
export interface DeliveryWake {
  tenant: string;
  subscriptionId: string;
  key: string;
}

export interface WebhookDeliveryDeps {
  subscriptions: (tenant: string) => WebhookSubscriptionRepository;
  log: (tenant: string) => WebhookLogRepository;
  attempts: (tenant: string) => WebhookAttemptRepository;
  send: (url: string, headers: Record<string, string>, body: string) => Promise<OutboundResult>;
  /** Opens the sealed signing secrets (and reseals ones found in clear, decision 1043). */
  secrets: WebhookSecrets;
  enqueue: (wake: DeliveryWake, delayMs?: number) => Promise<void>;
  timeoutMs: number;
  pauseAfterFailures: number;
  backoffMs: number;
  backoffMaxMs: number;
  logger: Logger;
}

export type RunOutcome = 'inactive' | 'busy' | 'waiting' | 'caught-up' | 'retrying' | 'paused' | 'lost-lease';

const BATCH = 50;

/** The delivery body: the Standard Webhooks payload (type, timestamp, data) plus the log position. */
export function deliveryBody(e: WebhookEventRecord): string {
  return JSON.stringify({
    type: e.type,
    timestamp: new Date(e.occurredAt).toISOString(),
    sequence: String(e._id),
    data: e.data ?? {},
  });
}

/**
 * Delivers a subscription's events in log order, one run at a time (a lease on the subscription
 * document), at least once: the cursor moves past an event only after its endpoint answered 2xx, so
 * a run that dies mid-request leaves the event to the next run, which sends it again under the same
 * `webhook-id`. A failure stops the run (later events wait: order before progress), schedules the next
 * run after an exponential back-off, and pauses the subscription after a configured run of failures.
 */
export class WebhookDeliveryService {
  constructor(private readonly deps: WebhookDeliveryDeps) {}

  /** Longer than one request: a run renews it before each send, so only a dead run's lease runs out. */
  private get leaseMs(): number {
    return this.deps.timeoutMs + 5000;
  }

  async run(tenant: string, subscriptionId: string): Promise<RunOutcome> {
    const subs = this.deps.subscriptions(tenant);
    const id = oid(subscriptionId, 'webhook_subscription_not_found');
    const token = randomUUID();
    const now = new Date();
    const sub = await subs.acquire(id, token, new Date(now.getTime() + this.leaseMs), now);
    // Busy: the holder looks for new events after it lets go (below), so nothing waits on this wake-up.
    if (!sub) return (await subs.findById(id))?.status === 'active' ? 'busy' : 'inactive';
    let outcome: RunOutcome = 'caught-up';
    let delayMs = 0;
    try {
      if (sub.nextAttemptAt && sub.nextAttemptAt.getTime() > now.getTime()) {
        outcome = 'waiting';
        delayMs = sub.nextAttemptAt.getTime() - now.getTime();
      } else {
        ({ outcome, delayMs } = await this.deliver(tenant, sub, token));
      }
    } finally {
      await subs.release(id, token).catch(() => undefined);
    }
    if (outcome === 'paused' || outcome === 'lost-lease') return outcome;
    // One follow-up per run, named after it: a retry, a wait, or events that arrived during the run.
    const wake = { tenant, subscriptionId, key: `${sub.runs}.next` };
    if (outcome === 'caught-up') {
      const after = await subs.findById(id);
      if (after?.status === 'active' && (await this.deps.log(tenant).head()) > after.cursor)
        await this.deps.enqueue(wake);
    } else await this.deps.enqueue(wake, delayMs);
    return outcome;
  }

  private async deliver(
    tenant: string,
    sub: WebhookSubscriptionRecord,
    token: string,
  ): Promise<{ outcome: RunOutcome; delayMs: number }> {
    const subs = this.deps.subscriptions(tenant);
    const log = this.deps.log(tenant);
    let cursor = sub.cursor;
    for (;;) {
      const head = await log.head();
      if (head <= cursor) return { outcome: 'caught-up', delayMs: 0 };
      const batch = await log.range(cursor, head, sub.types, BATCH);
      for (const event of batch) {
        const renewed = await subs.whileHolding(sub._id, token, {
          $set: { 'lease.until': new Date(Date.now() + this.leaseMs) },
        });
        if (!renewed) return { outcome: 'lost-lease', delayMs: 0 };
        const result = await this.attempt(tenant, sub, event);
        if (!result.ok) return this.failed(tenant, sub, token, result);
        const moved = await subs.whileHolding(sub._id, token, {
          $set: { cursor: event._id, failures: 0, lastSuccessAt: new Date(), lastAttemptAt: new Date() },
          $unset: { lastError: 1, nextAttemptAt: 1 },
        });
        if (!moved) return { outcome: 'lost-lease', delayMs: 0 };
        cursor = event._id;
      }
      if (batch.length < BATCH) {
        // Everything up to `head` not of this subscription's types is done with too.
        if (!(await subs.whileHolding(sub._id, token, { $max: { cursor: head } })))
          return { outcome: 'lost-lease', delayMs: 0 };
        cursor = head;
      }
    }
  }

  private async attempt(tenant: string, sub: WebhookSubscriptionRecord, event: WebhookEventRecord) {
    const at = new Date();
    const body = deliveryBody(event);
    const valid = sub.secrets.filter((s) => !s.expiresAt || s.expiresAt.getTime() > at.getTime());
    const secrets = await this.deps.secrets.openAll(tenant, this.deps.subscriptions(tenant), {
      _id: sub._id,
      secrets: valid,
    });
    const headers = {
      ...signedHeaders(event.eventId, at, body, secrets),
      'content-type': 'application/json',
      'user-agent': 'consult-webhooks/1',
    };
    const result = await this.deps.send(sub.url, headers, body);
    await this.deps.attempts(tenant).record({
      subscriptionId: sub._id,
      eventId: event.eventId,
      seq: event._id,
      at,
      ok: result.ok,
      ...(result.status !== undefined ? { status: result.status } : {}),
      latencyMs: result.latencyMs,
      ...(result.error ? { error: result.error.slice(0, 500) } : {}),
    });
    return result;
  }

  private async failed(
    tenant: string,
    sub: WebhookSubscriptionRecord,
    token: string,
    result: OutboundResult,
  ): Promise<{ outcome: RunOutcome; delayMs: number }> {
    const subs = this.deps.subscriptions(tenant);
    const fresh = await subs.findById(sub._id);
    const failures = (fresh?.failures ?? sub.failures ?? 0) + 1;
    const error = (result.error ?? `HTTP ${result.status}`).slice(0, 500);
    const base = { failures, lastError: error, lastAttemptAt: new Date() };
    if (failures >= this.deps.pauseAfterFailures) {
      await subs.whileHolding(sub._id, token, {
        $set: {
          ...base,
          status: 'paused',
          pausedAt: new Date(),
          pausedReason: `paused after ${failures} failed deliveries in a row; last: ${error}`,
        },
        $unset: { nextAttemptAt: 1 },
      });
      this.deps.logger.warn(
        { component: 'webhooks', tenant, subscriptionId: String(sub._id), failures, error },
        'webhook subscription paused after repeated failures',
      );
      return { outcome: 'paused', delayMs: 0 };
    }
    const delayMs = Math.min(this.deps.backoffMaxMs, this.deps.backoffMs * 2 ** (failures - 1));
    await subs.whileHolding(sub._id, token, { $set: { ...base, nextAttemptAt: new Date(Date.now() + delayMs) } });
    return { outcome: 'retrying', delayMs };
  }
}
