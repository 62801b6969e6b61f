import type { Logger } from 'pino';
import type {
  PendingEntry,
  WebhookLogRepository,
  WrittenDocs,
} from '../../data/repositories/webhook-log.repository.js';
import { inOrder, type OutboxEntry, type OutboxSource, type OutboxWrites } from '../../data/outbox.js';
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
  /** Seals signing secrets still stored in clear or under the previous key (decision 1043). */
  sealStoredSecrets?: (tenant: string) => Promise<number>;
}

/** Documents read per source and page (and named documents per page). */
const PENDING_PER_SOURCE = 500;
/** Pages a run that looks for every entry takes at most (the sweep takes the rest). */
const MAX_PAGES = 20;
/** Past this many named documents a queued run looks for every outbox instead (bounds its memory). */
const MAX_NAMED_DOCS = 50_000;

/** True when some source filled its page: more entries may be waiting there. */
function fillsPage(pending: readonly PendingEntry[]): boolean {
  const docs = new Map<OutboxSource, Set<string>>();
  for (const p of pending) {
    const set = docs.get(p.source) ?? new Set<string>();
    set.add(String(p.docId));
    docs.set(p.source, set);
  }
  return [...docs.values()].some((d) => d.size >= PENDING_PER_SOURCE);
}

/**
 * What a queued run reads: the documents its callers named, or every outbox (a caller named none,
 * the sweep, or too many were named).
 */
class Scope {
  /** Per source, the named documents by `String(id)`: their id, and their entries when the writer gave them. */
  private readonly docs = new Map<OutboxSource, Map<string, { id: unknown; entries?: readonly OutboxEntry[] }>>();
  private named = 0;
  all = false;

  add(written: OutboxWrites | undefined): void {
    if (this.all) return;
    if (!written) return this.widen();
    const docs = this.docs.get(written.source) ?? new Map<string, { id: unknown; entries?: readonly OutboxEntry[] }>();
    this.docs.set(written.source, docs);
    written.ids.forEach((id, i) => {
      if (this.all || docs.has(String(id))) return;
      docs.set(String(id), { id, entries: written.outboxes?.[i] });
      if (++this.named > MAX_NAMED_DOCS) this.widen();
    });
  }

  /**
   * The named documents, at most `size` per part, in the order they were named: those to read, and
   * the entries given for the others.
   */
  *pages(size: number): Generator<{ read: WrittenDocs; given: PendingEntry[] }> {
    let part = { read: new Map<OutboxSource, unknown[]>(), given: [] as PendingEntry[] };
    let count = 0;
    for (const [source, docs] of this.docs)
      for (const doc of docs.values()) {
        if (doc.entries) part.given.push(...doc.entries.map((entry) => ({ source, docId: doc.id, entry })));
        else {
          const ids = part.read.get(source) ?? [];
          ids.push(doc.id);
          part.read.set(source, ids);
        }
        if (++count === size) {
          yield part;
          part = { read: new Map(), given: [] };
          count = 0;
        }
      }
    if (count) yield part;
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

  /** Resolves once this process has no relay of the tenant running or queued (what it was asked to publish is published). */
  async settled(tenant: string): Promise<void> {
    for (;;) {
      const run = this.queued.get(tenant)?.run ?? this.running.get(tenant);
      if (!run) return;
      await run.catch(() => 0);
    }
  }

  private async relay(tenant: string, scope: Scope): Promise<number> {
    const log = this.deps.log(tenant);
    const types = new Set<string>();
    let published = 0;
    if (scope.all) {
      // Page after page while a source fills its page: a backlog is published now, not one page per sweep.
      for (let page = 0; page < MAX_PAGES; page++) {
        const pending = await log.pending(PENDING_PER_SOURCE);
        published += await this.append(log, pending, types);
        if (!fillsPage(pending)) break;
      }
    } else {
      for (const part of scope.pages(PENDING_PER_SOURCE)) {
        const read = part.read.size ? await log.pendingIn(part.read) : [];
        published += await this.append(log, inOrder([...part.given, ...read]), types);
      }
    }
    if (!published) return 0;
    const head = log.lastHead() ?? (await log.head());
    for (const sub of await this.deps.subscriptions(tenant).active())
      if (sub.types.some((t) => types.has(t)))
        await this.deps.enqueue({ tenant, subscriptionId: String(sub._id), key: `${sub.runs}.k${head}` });
    return published;
  }

  /** Appends entries to the log in their order, then pulls them from their documents; notes their types. */
  private async append(log: WebhookLogRepository, pending: PendingEntry[], types: Set<string>): Promise<number> {
    if (!pending.length) return 0;
    await log.appendAll(pending.map((p) => p.entry));
    const byDoc = new Map<string, { source: OutboxSource; docId: unknown; entries: OutboxEntry[] }>();
    for (const p of pending) {
      types.add(p.entry.type);
      const key = `${p.source}:${String(p.docId)}`;
      const doc = byDoc.get(key) ?? { source: p.source, docId: p.docId, entries: [] };
      doc.entries.push(p.entry);
      byDoc.set(key, doc);
    }
    await log.clearAll([...byDoc.values()]);
    return pending.length;
  }

  /**
   * One pass over every tenant: publish what writers left in outboxes, wake subscriptions that are
   * behind with no live run (their queued job may have been lost with Redis, or their worker killed),
   * and drop events and attempts past the retention and seal secrets left in clear now and then.
   */
  async sweep(now = new Date()): Promise<void> {
    const tick = Math.floor(now.getTime() / this.deps.sweepMs);
    const prune = this.sweeps++ % 60 === 0;
    for (const tenant of await this.deps.tenants()) {
      try {
        await this.publish(tenant);
        await this.wakeBehind(tenant, now, tick);
        if (prune) await this.prune(tenant, now);
        if (prune) await this.deps.sealStoredSecrets?.(tenant);
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
