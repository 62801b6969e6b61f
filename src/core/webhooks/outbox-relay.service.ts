import type { Logger } from 'pino';
import type {
  PendingEntry,
  WebhookLogRepository,
  WrittenDocs,
} from '../../data/repositories/webhook-log.repository.js';
import type { OutboxSource, OutboxWrites } from '../../data/outbox.js';
import type { WebhookSubscriptionRepository } from '../../data/repositories/webhook-subscription.repository.js';
import type { WebhookAttemptRepository } from '../../data/repositories/webhook-attempt.repository.js';
import type { DeliveryWake } from './webhook-delivery.service.js';

export interface OutboxRelayDeps {
  log: (tenant: string) => WebhookLogRepository;
  subscriptions: (tenant: string) => WebhookSubscriptionRepository;
  attempts: (tenant: string) => WebhookAttemptRepository;
  tenants: () => Promise<string[]>;
  enqueue: (wake: DeliveryWake) => Promise<void>;
  retentionHours: number;
  sweepMs: number;
  logger: Logger;
}

const PENDING_PER_SOURCE = 500;
/** Past this many named documents a queued run looks for every outbox instead (one read per source). */
const MAX_NAMED_DOCS = 5000;

/**
 * What a queued run reads: the documents its callers named, or every outbox (a caller named none,
 * the sweep, or too many were named).
 */
class Scope {
  private readonly docs = new Map<OutboxSource, Map<string, unknown>>();
  private named = 0;
  all = false;

  add(written: OutboxWrites | undefined): void {
    if (this.all) return;
    if (!written) return this.widen();
    const ids = this.docs.get(written.source) ?? new Map<string, unknown>();
    this.docs.set(written.source, ids);
    for (const id of written.ids) {
      if (ids.has(String(id))) continue;
      ids.set(String(id), id);
      if (++this.named > MAX_NAMED_DOCS) return this.widen();
    }
  }

  get written(): WrittenDocs {
    return new Map([...this.docs].map(([source, ids]) => [source, [...ids.values()]]));
  }

  private widen(): void {
    this.all = true;
    this.docs.clear();
  }
}

/**
 * Moves announced changes from the documents' outboxes into the tenant's event log, in the order
 * they happened, and wakes the subscriptions. Runs right after a change (publish) and on every node's
 * sweep, which also catches what a crashed writer left behind (decision 890): an entry is appended
 * once (its id is unique in the log) and only then pulled from its document, so a crash in between
 * repeats the append harmlessly.
 */
export class OutboxRelayService {
  /** Per tenant: the relay running now, and the one queued behind it (not started yet) with what it reads. */
  private readonly running = new Map<string, Promise<number>>();
  private readonly queued = new Map<string, { run: Promise<number>; scope: Scope }>();
  private sweeps = 0;

  constructor(private readonly deps: OutboxRelayDeps) {}

  /**
   * Publishes the entries just written to the named documents (every pending entry of the tenant
   * without `written`) now; a failure is logged and left to the sweep, never thrown.
   */
  async publishNow(tenant: string, written?: OutboxWrites): Promise<void> {
    await this.publish(tenant, written).catch((err: Error) =>
      this.deps.logger.warn({ component: 'webhooks', tenant, err: err.message }, 'outbox publish deferred to sweep'),
    );
  }

  /**
   * One relay per tenant at a time in this process. A call while one runs queues the next, and every
   * call until that one starts joins it: it has not read the outboxes yet, so it publishes what those
   * callers wrote. Under a steady stream of writes (telemetry announces every stored batch) at most
   * two relays exist per tenant, instead of one per write queued without bound.
   *
   * A caller that names the documents it wrote (`written`) has the run read those by `_id`; the run
   * reads every document its callers named, or looks for every outbox when one of them named none.
   * An entry a run did not read stays in its document for a later run or the sweep.
   */
  async publish(tenant: string, written?: OutboxWrites): Promise<number> {
    const waiting = this.queued.get(tenant);
    if (waiting) {
      waiting.scope.add(written);
      return waiting.run;
    }
    const scope = new Scope();
    scope.add(written);
    const prior = this.running.get(tenant);
    const next: Promise<number> = (prior ?? Promise.resolve(0))
      .catch(() => 0)
      .then(() => {
        this.queued.delete(tenant);
        this.running.set(tenant, next);
        return this.relay(tenant, scope);
      });
    this.queued.set(tenant, { run: next, scope });
    try {
      return await next;
    } finally {
      if (this.running.get(tenant) === next) this.running.delete(tenant);
    }
  }

  private async relay(tenant: string, scope: Scope): Promise<number> {
    const log = this.deps.log(tenant);
    const pending: PendingEntry[] = scope.all
      ? await log.pending(PENDING_PER_SOURCE)
      : await log.pendingIn(scope.written);
    if (!pending.length) return 0;
    const byDoc = new Map<string, { source: (typeof pending)[number]['source']; docId: unknown; ids: string[] }>();
    const types = new Set<string>();
    await log.appendAll(pending.map((p) => p.entry));
    for (const p of pending) {
      types.add(p.entry.type);
      const key = `${p.source}:${String(p.docId)}`;
      const doc = byDoc.get(key) ?? { source: p.source, docId: p.docId, ids: [] };
      doc.ids.push(p.entry.id);
      byDoc.set(key, doc);
    }
    await log.clearAll([...byDoc.values()]);
    const head = (await log.knownHead()) ?? (await log.head());
    for (const sub of await this.deps.subscriptions(tenant).active())
      if (sub.types.some((t) => types.has(t)))
        await this.deps.enqueue({ tenant, subscriptionId: String(sub._id), key: `${sub.runs}.k${head}` });
    return pending.length;
  }

  /**
   * One pass over every tenant: publish what writers left in outboxes, wake subscriptions that are
   * behind with no live run (their queued job may have been lost with Redis, or their worker killed),
   * and drop events and attempts past the retention now and then.
   */
  async sweep(now = new Date()): Promise<void> {
    const tick = Math.floor(now.getTime() / this.deps.sweepMs);
    const prune = this.sweeps++ % 60 === 0;
    for (const tenant of await this.deps.tenants()) {
      try {
        await this.publish(tenant);
        await this.wakeBehind(tenant, now, tick);
        if (prune) await this.prune(tenant, now);
      } catch (err) {
        this.deps.logger.warn({ component: 'webhooks', tenant, err: (err as Error).message }, 'webhook sweep failed');
      }
    }
  }

  private async wakeBehind(tenant: string, now: Date, tick: number): Promise<void> {
    const subs = await this.deps.subscriptions(tenant).active();
    if (!subs.length) return;
    const head = await this.deps.log(tenant).head();
    for (const s of subs) {
      const leased = s.lease?.until && s.lease.until.getTime() > now.getTime();
      const waiting = s.nextAttemptAt && s.nextAttemptAt.getTime() > now.getTime();
      if (s.cursor < head && !leased && !waiting)
        await this.deps.enqueue({ tenant, subscriptionId: String(s._id), key: `${s.runs}.s${tick}` });
    }
  }

  private async prune(tenant: string, now: Date): Promise<void> {
    const cutoff = new Date(now.getTime() - this.deps.retentionHours * 3_600_000);
    await this.deps.log(tenant).prune(cutoff);
    await this.deps.attempts(tenant).prune(cutoff);
  }
}
