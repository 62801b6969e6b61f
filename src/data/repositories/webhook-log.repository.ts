import type { TenantDb } from '../mongo.js';
import type { WebhookEventRecord } from '../models/webhook.model.js';
import { OUTBOX_SOURCES, type OutboxEntry, type OutboxSource } from '../outbox.js';
import { duplicateIndexes } from './duplicate-keys.js';
import { bulkUpdate } from './bulk-updates.js';

export type { WebhookEventRecord } from '../models/webhook.model.js';
export type { OutboxEntry, OutboxSource } from '../outbox.js';

/** An outbox entry still waiting in its document, with where it is. */
export interface PendingEntry {
  source: OutboxSource;
  docId: unknown;
  entry: OutboxEntry;
}

/**
 * The tenant's event log (numbered without gaps) and the outboxes it is filled from.
 *
 * Appending is optimistic: read the highest number, insert the next one; a duplicate `_id` means
 * another publisher took that number first, so read again. An insert of n+1 is only tried after n
 * was seen stored, so the log never shows a later number before an earlier one: a reader that saw
 * n has seen everything up to n (what the replay cursor and the delivery cursor rely on).
 */
export class WebhookLogRepository {
  constructor(private readonly db: TenantDb) {}

  private get Log() {
    return this.db.models.WebhookEvent;
  }

  async head(): Promise<number> {
    const last = await this.Log.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: number }>().exec();
    return last?._id ?? 0;
  }

  async oldest(): Promise<number | undefined> {
    const first = await this.Log.findOne({}, { _id: 1 }).sort({ _id: 1 }).lean<{ _id: number }>().exec();
    return first?._id;
  }

  /**
   * Appends entries in their order, each once: an entry already in the log (by its id) keeps its
   * number. The ones not logged yet go in one ordered insert numbered on from the head; an ordered
   * insert stops at its first refusal, so the numbers stay without gaps and n+1 is stored only after
   * n. A refusal (another publisher took a number, or logged one of these entries first) reads again
   * and goes on with the entries not stored. Returns how many this call appended.
   */
  async appendAll(entries: readonly OutboxEntry[], publishedAt = new Date()): Promise<number> {
    let rest = [...new Map(entries.map((e) => [e.id, e])).values()];
    let appended = 0;
    while (rest.length) {
      const logged = await this.Log.find({ eventId: { $in: rest.map((e) => e.id) } }, { eventId: 1 })
        .lean<{ eventId: string }[]>()
        .exec();
      const known = new Set(logged.map((d) => d.eventId));
      rest = rest.filter((e) => !known.has(e.id));
      if (!rest.length) break;
      const head = await this.head();
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
        return appended + docs.length;
      } catch (err) {
        const refused = duplicateIndexes(err);
        if (!refused?.length) throw err;
        const stored = Math.min(...refused);
        appended += stored;
        rest = rest.slice(stored);
      }
    }
    return appended;
  }

  /** Events after `cursor` up to `upTo` (inclusive) of the given types, in log order. */
  range(cursor: number, upTo: number, types: readonly string[], limit: number): Promise<WebhookEventRecord[]> {
    return this.Log.find({ _id: { $gt: cursor, $lte: upTo }, type: { $in: [...types] } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<WebhookEventRecord[]>()
      .exec();
  }

  /** A page of the log after `cursor`, in order. */
  page(cursor: number, take: number, types?: readonly string[]): Promise<WebhookEventRecord[]> {
    return this.Log.find({ _id: { $gt: cursor }, ...(types?.length ? { type: { $in: [...types] } } : {}) })
      .sort({ _id: 1 })
      .limit(take)
      .lean<WebhookEventRecord[]>()
      .exec();
  }

  /** Drops events published before `cutoff`, always keeping the newest (it carries the numbering on). */
  async prune(cutoff: Date): Promise<number> {
    const head = await this.head();
    const r = await this.Log.deleteMany({ publishedAt: { $lt: cutoff }, _id: { $lt: head } }).exec();
    return r.deletedCount;
  }

  /** Entries still in the outboxes of the tenant's documents, oldest first (by time, then id). */
  async pending(limitPerSource: number): Promise<PendingEntry[]> {
    const out: PendingEntry[] = [];
    for (const source of OUTBOX_SOURCES) {
      const docs = await this.db.models[source].collection
        .find({ 'outbox.0': { $exists: true } }, { projection: { outbox: 1 } })
        .limit(limitPerSource)
        .toArray();
      for (const d of docs)
        for (const entry of (d.outbox ?? []) as OutboxEntry[]) out.push({ source, docId: d._id, entry });
    }
    return out.sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || (a.entry.id < b.entry.id ? -1 : 1));
  }

  /** Removes published entries from their documents' outboxes (by id, so concurrent additions stay). */
  async clearAll(
    published: readonly { source: OutboxSource; docId: unknown; ids: readonly string[] }[],
  ): Promise<void> {
    for (const source of OUTBOX_SOURCES) {
      const ops = published
        .filter((p) => p.source === source)
        .map((p) => ({
          updateOne: { filter: { _id: p.docId as never }, update: { $pull: { outbox: { id: { $in: [...p.ids] } } } } },
        }));
      if (ops.length) await bulkUpdate(this.db.server, this.db.models[source].collection, ops as never[]);
    }
  }
}
