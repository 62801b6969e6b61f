import type { TenantDb } from '../mongo.js';
import type { WebhookEventRecord } from '../models/webhook.model.js';
import { OUTBOX_SOURCES, inOrder, type OutboxEntry, type OutboxSource } from '../outbox.js';
import { duplicateIndexes } from './duplicate-keys.js';
import { bulkUpdate } from './bulk-updates.js';
import { SequenceHeads } from './sequence-heads.js';

export type { WebhookEventRecord } from '../models/webhook.model.js';
export type { OutboxEntry, OutboxSource } from '../outbox.js';

/** An outbox entry still waiting in its document, with where it is. */
export interface PendingEntry {
  source: OutboxSource;
  docId: unknown;
  entry: OutboxEntry;
}

/** Documents named by their writer as carrying new outbox entries, per source. */
export type WrittenDocs = ReadonlyMap<OutboxSource, readonly unknown[]>;

/**
 * Matches the documents whose outbox holds an entry: every entry has a date `at`, so on MongoDB this
 * is a range on the `outbox.at` index (documents without entries are not in that range), not a
 * scan of the collection; an emptied outbox (`[]`) leaves the range too.
 */
export const PENDING_FILTER = { 'outbox.at': { $gte: new Date(-8.64e15) } } as const;

/** Multiples of the log's size read for a process's first head (someStored) before it sorts instead. */
const FIRST_LOOKS = 64;
/** Hinted documents read per `_id` query. */
const IDS_PER_READ = 500;
/**
 * Documents cleared per update. The `$pull` condition names every entry of the update's documents,
 * and a server that matches `$in` by a linear scan (mongo-java-server) pays documents x entries per
 * update: clearing 500 documents took 30 ms of the embedded server in one update, 18 ms in updates
 * of 64 (2026-11-27). On MongoDB each update is bounded by the `_id` index either way.
 */
const DOCS_PER_CLEAR = 64;

/**
 * The tenant's event log (numbered without gaps) and the outboxes it is filled from.
 *
 * Appending is optimistic: read the highest number, insert the next one; a duplicate `_id` means
 * another publisher took that number first, so read again. An insert of n+1 is only tried after n
 * was seen stored, so the log never shows a later number before an earlier one: a reader that saw
 * n has seen everything up to n (what the replay cursor and the delivery cursor rely on).
 */
export class WebhookLogRepository {
  /** `heads`: the process's last known log head per tenant, shared by the repositories of a process. */
  constructor(
    private readonly db: TenantDb,
    private readonly heads: SequenceHeads = new SequenceHeads(),
  ) {}

  private get Log() {
    return this.db.models.WebhookEvent;
  }

  /**
   * The highest number logged. On a server that sorts by `_id` without its index (mongo-java-server), read
   * up by `_id` (headAbove: the log has no gaps above a stored number) from the head this process last saw
   * when that is still stored, else from a number found stored without sorting (someStored); otherwise,
   * and on other servers, by sorting the log.
   */
  async head(): Promise<number> {
    if (!this.db.server.idOrderFromIndex) {
      const known = this.heads.get(this.db.tenant)?.seq;
      let found = known === undefined ? undefined : await this.headAbove(known);
      if (found === undefined) {
        const some = await this.someStored();
        found = some === undefined || some === 0 ? some : await this.headAbove(some);
      }
      if (found !== undefined) {
        // Stored: the next read goes up from here.
        if (found > 0) this.heads.set(this.db.tenant, { seq: found });
        return found;
      }
    }
    const last = await this.Log.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: number }>().exec();
    if (last) this.heads.set(this.db.tenant, { seq: last._id });
    return last?._id ?? 0;
  }

  /**
   * A number stored in the log, without sorting it (a process's first look, on a server that sorts by
   * `_id` without its index): the log keeps `n` entries numbered in one run from its oldest to its head,
   * and a run of `n` consecutive numbers holds exactly one multiple of `n`, so the multiples of `n` are
   * read up to the first one stored, at most FIRST_LOOKS of them; 0 for an empty log; undefined when none
   * was found (the oldest far above `n` times FIRST_LOOKS: a long history with little kept).
   */
  private async someStored(): Promise<number | undefined> {
    const n = await this.Log.estimatedDocumentCount().exec();
    if (n === 0) return 0;
    for (let k = 1; k <= FIRST_LOOKS; k++) if (await this.has(k * n)) return k * n;
    return undefined;
  }

  /**
   * The head, read up from `floor` by `_id` alone: steps that double up to the first number not stored,
   * then halve between the last stored one and it (about 2 log2(n) reads for n entries logged since);
   * undefined when `floor` itself is not stored (the log was emptied or pruned past it).
   */
  private async headAbove(floor: number): Promise<number | undefined> {
    const has = (seq: number) => this.has(seq);
    if (!(await has(floor))) return undefined;
    let stored = floor;
    let step = 1;
    while (await has(stored + step)) {
      stored += step;
      step *= 2;
    }
    let missing = stored + step;
    while (missing - stored > 1) {
      const mid = stored + Math.floor((missing - stored) / 2);
      if (await has(mid)) stored = mid;
      else missing = mid;
    }
    return stored;
  }

  /**
   * The lowest number still logged. On a server that sorts by `_id` without its index, by halving between
   * 0 and the head: the numbers from the oldest kept to the head are stored (pruning takes the oldest
   * first; entries published within the same moments on nodes with skewed clocks may leave a few ragged
   * numbers at that edge, which moves the answer by those few).
   */
  async oldest(): Promise<number | undefined> {
    if (!this.db.server.idOrderFromIndex) {
      const head = await this.head();
      if (head === 0 || !(await this.has(head))) return undefined;
      let missing = 0;
      let stored = head;
      while (stored - missing > 1) {
        const mid = missing + Math.floor((stored - missing) / 2);
        if (await this.has(mid)) stored = mid;
        else missing = mid;
      }
      return stored;
    }
    const first = await this.Log.findOne({}, { _id: 1 }).sort({ _id: 1 }).lean<{ _id: number }>().exec();
    return first?._id;
  }

  private async has(seq: number): Promise<boolean> {
    return (await this.Log.collection.findOne({ _id: seq as never }, { projection: { _id: 1 } })) !== null;
  }

  /**
   * Appends entries in their order, each once: an entry already in the log (by its id) keeps its
   * number. The ones not logged yet go in one ordered insert numbered on from the head; an ordered
   * insert stops at its first refusal, so the numbers stay without gaps and n+1 is stored only after
   * n. A refusal (another publisher took a number, or logged one of these entries first) reads again
   * and goes on with the entries not stored. Returns how many this call appended.
   *
   * The first attempt numbers on from the head this process last saw, once a read by `_id` found it
   * stored (so the numbers still go on from a stored one), without looking for the entries in the log
   * first (the unique entry id refuses one that is); only a refusal, or no known head, reads the
   * logged entries and the head by sorting the log (a scan on servers that sort without the `_id` index).
   */
  async appendAll(entries: readonly OutboxEntry[], publishedAt = new Date()): Promise<number> {
    let rest = [...new Map(entries.map((e) => [e.id, e])).values()];
    let appended = 0;
    let guess = await this.knownHead();
    while (rest.length) {
      // With a known head the first insert goes straight in: the unique entry id refuses one already logged.
      if (guess === undefined) {
        const logged = await this.Log.find({ eventId: { $in: rest.map((e) => e.id) } }, { eventId: 1 })
          .lean<{ eventId: string }[]>()
          .exec();
        const known = new Set(logged.map((d) => d.eventId));
        rest = rest.filter((e) => !known.has(e.id));
        if (!rest.length) break;
      }
      const head = guess ?? (await this.head());
      guess = undefined;
      const docs = rest.map((e, i) => ({
        _id: head + 1 + i,
        eventId: e.id,
        type: e.type,
        ...(e.consultationId ? { consultationId: e.consultationId } : {}),
        occurredAt: e.at,
        publishedAt,
        data: e.data,
      }));
      try {
        await this.Log.collection.insertMany(docs as never[], { ordered: true });
        this.heads.set(this.db.tenant, { seq: head + docs.length });
        return appended + docs.length;
      } catch (err) {
        const refused = duplicateIndexes(err);
        if (!refused?.length) throw err;
        const stored = Math.min(...refused);
        if (stored) this.heads.set(this.db.tenant, { seq: head + stored });
        appended += stored;
        rest = rest.slice(stored);
      }
    }
    return appended;
  }

  /** The head this process last saw or wrote, unchecked (just after an append it is that append's). */
  lastHead(): number | undefined {
    return this.heads.get(this.db.tenant)?.seq;
  }

  /**
   * The head this process last saw or wrote, when it is still stored (one read by `_id`); a log
   * emptied or recreated under it (a tenant removed and made again) makes it forgotten.
   */
  async knownHead(): Promise<number | undefined> {
    const seq = this.heads.get(this.db.tenant)?.seq;
    if (seq === undefined) return undefined;
    if (await this.Log.collection.findOne({ _id: seq as never }, { projection: { _id: 1 } })) return seq;
    this.heads.forget(this.db.tenant);
    return undefined;
  }

  /** Events after `cursor` up to `upTo` (inclusive) of the given types, in log order. */
  range(cursor: number, upTo: number, types: readonly string[], limit: number): Promise<WebhookEventRecord[]> {
    if (!this.db.server.idOrderFromIndex) return this.byNumbers(cursor, upTo, limit, types);
    return this.Log.find({ _id: { $gt: cursor, $lte: upTo }, type: { $in: [...types] } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<WebhookEventRecord[]>()
      .exec();
  }

  /** A page of the log after `cursor`, in order. */
  async page(cursor: number, take: number, types?: readonly string[]): Promise<WebhookEventRecord[]> {
    if (!this.db.server.idOrderFromIndex)
      return this.byNumbers(cursor, await this.head(), take, types?.length ? types : undefined);
    return this.Log.find({ _id: { $gt: cursor }, ...(types?.length ? { type: { $in: [...types] } } : {}) })
      .sort({ _id: 1 })
      .limit(take)
      .lean<WebhookEventRecord[]>()
      .exec();
  }

  /**
   * The entries numbered after `cursor` up to `upTo` (of `types` when given), the first `limit` of them,
   * read by `_id` in steps of IDS_PER_READ numbers (each answered from the `_id` index) where a range of
   * `_id`s is a scan of the log (mongo-java-server). A cursor below the oldest entry kept starts there.
   */
  private async byNumbers(
    cursor: number,
    upTo: number,
    limit: number,
    types?: readonly string[],
  ): Promise<WebhookEventRecord[]> {
    let from = cursor + 1;
    if (from <= upTo && !(await this.has(from))) from = Math.max(from, (await this.oldest()) ?? upTo + 1);
    const out: WebhookEventRecord[] = [];
    for (; from <= upTo && out.length < limit; from += IDS_PER_READ) {
      const numbers = Array.from({ length: Math.min(IDS_PER_READ, upTo - from + 1) }, (_, i) => from + i);
      out.push(
        ...(await this.Log.find({ _id: { $in: numbers }, ...(types ? { type: { $in: [...types] } } : {}) })
          .sort({ _id: 1 })
          .lean<WebhookEventRecord[]>()
          .exec()),
      );
    }
    return out.slice(0, limit);
  }

  /** Drops events published before `cutoff`, always keeping the newest (it carries the numbering on). */
  async prune(cutoff: Date): Promise<number> {
    const head = await this.head();
    const r = await this.Log.deleteMany({ publishedAt: { $lt: cutoff }, _id: { $lt: head } }).exec();
    return r.deletedCount;
  }

  /**
   * Entries still in the outboxes of the tenant's documents, the oldest documents' first, up to
   * `limitPerSource` documents of each source; in order (by time, then id).
   */
  async pending(limitPerSource: number): Promise<PendingEntry[]> {
    const out: PendingEntry[] = [];
    for (const source of OUTBOX_SOURCES) {
      const docs = await this.db.models[source].collection
        .find(PENDING_FILTER, { projection: { outbox: 1 } })
        .sort({ 'outbox.at': 1 })
        .limit(limitPerSource)
        .toArray();
      out.push(...entriesOf(source, docs));
    }
    return inOrder(out);
  }

  /**
   * Entries in the outboxes of the named documents only (their writer said it announced there): reads
   * by `_id`, which every supported server answers from its index, instead of looking for outboxes.
   */
  async pendingIn(written: WrittenDocs): Promise<PendingEntry[]> {
    const out: PendingEntry[] = [];
    for (const [source, ids] of written) {
      for (let i = 0; i < ids.length; i += IDS_PER_READ) {
        const docs = await this.db.models[source].collection
          .find({ _id: { $in: ids.slice(i, i + IDS_PER_READ) as never[] } }, { projection: { outbox: 1 } })
          .toArray();
        out.push(...entriesOf(source, docs));
      }
    }
    return inOrder(out);
  }

  /**
   * Removes published entries from their documents' outboxes (those entries only, so concurrent
   * additions stay): one update per source and `DOCS_PER_CLEAR` documents, by `_id`, pulling their
   * entries by id (on a server whose `$pull` takes no condition, FerretDB 1.x, by their whole value),
   * the page's updates in one bulk command.
   */
  async clearAll(
    published: readonly { source: OutboxSource; docId: unknown; entries: readonly OutboxEntry[] }[],
  ): Promise<void> {
    for (const source of OUTBOX_SOURCES) {
      const mine = published.filter((p) => p.source === source);
      const ops = [];
      for (let i = 0; i < mine.length; i += DOCS_PER_CLEAR) {
        const part = mine.slice(i, i + DOCS_PER_CLEAR);
        const entries = part.flatMap((p) => p.entries);
        ops.push({
          updateMany: {
            filter: { _id: { $in: part.map((p) => p.docId) } },
            update: this.db.server.pullByCondition
              ? { $pull: { outbox: { id: { $in: entries.map((e) => e.id) } } } }
              : { $pullAll: { outbox: entries } },
          },
        });
      }
      // The updates of a page go in one command (as many per command as the server takes).
      if (ops.length) await bulkUpdate(this.db.server, this.db.models[source].collection, ops as never[]);
    }
  }
}

function entriesOf(source: OutboxSource, docs: readonly { _id: unknown; outbox?: unknown }[]): PendingEntry[] {
  return docs.flatMap((d) => ((d.outbox ?? []) as OutboxEntry[]).map((entry) => ({ source, docId: d._id, entry })));
}
