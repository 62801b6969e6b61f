import type { TenantDb } from '../mongo.js';
import type { WebhookEventRecord } from '../models/webhook.model.js';
import { OUTBOX_SOURCES, type OutboxEntry, type OutboxSource } from '../outbox.js';
import { isDuplicateKey } from './duplicate-keys.js';

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

  private findByEventId(eventId: string) {
    return this.Log.findOne({ eventId }, { _id: 1 }).lean<{ _id: number }>().exec();
  }

  /** Appends an entry once: an entry already in the log (by its id) keeps its number. */
  async append(e: OutboxEntry, publishedAt = new Date()): Promise<{ seq: number; appended: boolean }> {
    for (;;) {
      const existing = await this.findByEventId(e.id);
      if (existing) return { seq: existing._id, appended: false };
      const seq = (await this.head()) + 1;
      try {
        await this.Log.collection.insertOne({
          _id: seq as never,
          eventId: e.id,
          type: e.type,
          ...(e.consultationId ? { consultationId: e.consultationId } : {}),
          occurredAt: e.at,
          publishedAt,
          data: e.data,
        });
        return { seq, appended: true };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
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

  /** Removes published entries from their document's outbox (by id, so concurrent additions stay). */
  async clear(source: OutboxSource, docId: unknown, ids: readonly string[]): Promise<void> {
    await this.db.models[source].collection.updateOne({ _id: docId as never }, {
      $pull: { outbox: { id: { $in: [...ids] } } },
    } as never);
  }
}
