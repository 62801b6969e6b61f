import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { TelemetryRecordDoc } from '../models/telemetry.model.js';
import { duplicateIndexes } from './duplicate-keys.js';
import type { OutboxEntry } from '../outbox.js';

export type TelemetryRecord = TelemetryRecordDoc & { _id: string };

export interface NewTelemetryRecord {
  conferenceId: string;
  sequence: number;
  eventId: string;
  type: string;
  occurredAt: Date;
  payload: Record<string, unknown>;
  /** Outbound events announcing this record, stored with it (decision 890); a replayed record adds none. */
  outbox?: OutboxEntry[];
}

/** The completion flags an event can carry; only `true` is ever written (flags never go back). */
export interface EventFlags {
  hasLedger?: boolean;
  hasRecording?: boolean;
  hasChat?: boolean;
}

/**
 * A record's `_id`: its natural key. A sequence is an integer, so splitting at the last `:` gives the
 * pair back even when the conference id itself contains `:`; distinct pairs never share an id.
 */
export const telemetryRecordId = (conferenceId: string, sequence: number): string => `${conferenceId}:${sequence}`;

/** What a store did: records stored and refused as already stored, and the stored ones that carry an outbox. */
export interface StoredTelemetry {
  stored: number;
  duplicates: number;
  announcedIn: string[];
  /** The outbox each of `announcedIn` was stored with (records get no entries afterwards). */
  outboxes: OutboxEntry[][];
}

/**
 * Raw telemetry of one tenant, stored once per (conferenceId, sequence), the conference -> event
 * bindings, and the event facts the ingest and completion need (existence, flags).
 */
export class TelemetryRepository {
  constructor(private readonly db: TenantDb) {}

  /**
   * Inserts every record with its natural key as `_id` in one unordered insert straight through the
   * driver; the ones the unique indexes refuse are already stored (a replay, or a concurrent insert of
   * the same message) and are left untouched: first write wins. No read first: on MongoDB-wire servers
   * that do not use secondary indexes a lookup by (conferenceId, sequence) scans the collection, and a
   * fresh batch, the common case, has nothing to find. Any other write error fails the call.
   */
  async storeOnce(records: readonly NewTelemetryRecord[]): Promise<StoredTelemetry> {
    if (!records.length) return { stored: 0, duplicates: 0, announcedIn: [], outboxes: [] };
    const createdAt = new Date();
    const docs = records.map(({ outbox, ...r }) => ({
      _id: telemetryRecordId(r.conferenceId, r.sequence),
      ...r,
      ...(outbox?.length ? { outbox } : {}),
      eventId: new Types.ObjectId(r.eventId),
      createdAt,
    }));
    let refused: number[] = [];
    try {
      await this.db.models.TelemetryRecord.collection.insertMany(docs as never[], { ordered: false });
    } catch (e) {
      refused = duplicateIndexes(e) ?? [];
      if (!refused.length) throw e;
    }
    const skipped = new Set(refused);
    const announced = docs.filter((d, i) => d.outbox && !skipped.has(i));
    return {
      stored: records.length - refused.length,
      duplicates: refused.length,
      announcedIn: announced.map((d) => d._id),
      outboxes: announced.map((d) => d.outbox!),
    };
  }

  /**
   * A conference's records in sequence order. Its records' ids all start with `<conferenceId>:` (their
   * natural key), so they are also the ids from `<conferenceId>:` up to `<conferenceId>;` (the next
   * character): MongoDB answers either condition from an index; the embedded server reads that range
   * of its keys (decision 1173) where the conference alone would read every record of the tenant.
   */
  listForConference(conferenceId: string): Promise<TelemetryRecord[]> {
    return this.db.models.TelemetryRecord.find({
      _id: { $gte: `${conferenceId}:`, $lt: `${conferenceId};` },
      conferenceId,
    } as never)
      .sort({ sequence: 1 })
      .lean<TelemetryRecord[]>()
      .exec();
  }

  /** The event each of these conferences is bound to, for those that are bound (reads by `_id`). */
  async boundEvents(conferenceIds: readonly string[]): Promise<Map<string, string>> {
    const col = this.db.models.ConferenceBinding.collection;
    const rows = await Promise.all(
      conferenceIds.map((id) => col.findOne({ _id: id as never }, { projection: { eventId: 1 } })),
    );
    const out = new Map<string, string>();
    rows.forEach((r, i) => {
      if (r) out.set(conferenceIds[i]!, String(r.eventId));
    });
    return out;
  }

  /**
   * Binds conferences to events, first writer wins (the `_id` is the conference id). Returns the
   * event each conference is bound to afterwards: the one given, or the one a concurrent writer bound first.
   */
  async bindConferences(bindings: ReadonlyMap<string, string>): Promise<Map<string, string>> {
    const entries = [...bindings];
    if (!entries.length) return new Map();
    const createdAt = new Date();
    const docs = entries.map(([conferenceId, eventId]) => ({
      _id: conferenceId,
      eventId: new Types.ObjectId(eventId),
      createdAt,
    }));
    let refused: number[] = [];
    try {
      await this.db.models.ConferenceBinding.collection.insertMany(docs as never[], { ordered: false });
    } catch (e) {
      const dup = duplicateIndexes(e);
      if (!dup) throw e;
      refused = dup;
    }
    const out = new Map(entries);
    const existing = await this.boundEvents(refused.map((i) => entries[i]![0]));
    for (const [conferenceId, eventId] of existing) out.set(conferenceId, eventId);
    return out;
  }

  /**
   * The user a participant of a conference joined as (its latest join naming one), for a leave that
   * does not say: the (conferenceId, sequence) index narrows the read to the conference.
   */
  async joinedUserId(conferenceId: string, participantKey: string): Promise<string | undefined> {
    const row = await this.db.models.TelemetryRecord.collection.findOne(
      {
        conferenceId,
        type: 'participant_joined',
        'payload.participantKey': participantKey,
        'payload.userId': { $gt: '' },
      },
      { projection: { 'payload.userId': 1 }, sort: { sequence: -1 } },
    );
    const userId = (row?.payload as { userId?: string } | undefined)?.userId;
    return userId || undefined;
  }

  async eventExists(eventId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(eventId)) return false;
    const found = await this.db.models.Event.collection.findOne(
      { _id: new Types.ObjectId(eventId) },
      { projection: { _id: 1 } },
    );
    return found !== null;
  }

  /** Sets the given flags to true; never clears one. */
  async raiseEventFlags(eventId: string, flags: EventFlags): Promise<void> {
    const $set = Object.fromEntries(Object.entries(flags).filter(([, v]) => v === true));
    if (!Object.keys($set).length) return;
    await this.db.models.Event.updateOne({ _id: new Types.ObjectId(eventId) }, { $set }).exec();
  }
}
