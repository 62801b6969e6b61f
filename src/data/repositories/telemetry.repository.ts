import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { TelemetryRecordDoc } from '../models/telemetry.model.js';

export type TelemetryRecord = TelemetryRecordDoc & { _id: Types.ObjectId };

export interface NewTelemetryRecord {
  conferenceId: string;
  sequence: number;
  eventId: string;
  type: string;
  occurredAt: Date;
  payload: Record<string, unknown>;
}

/** The completion flags an event can carry; only `true` is ever written (flags never go back). */
export interface EventFlags {
  hasLedger?: boolean;
  hasRecording?: boolean;
  hasChat?: boolean;
}

/**
 * Raw telemetry of one tenant, stored once per (conferenceId, sequence), and the event facts the
 * ingest and completion need (existence, flags).
 */
export class TelemetryRepository {
  constructor(private readonly db: TenantDb) {}

  /**
   * Inserts the records that are new; a (conferenceId, sequence) already stored is left untouched,
   * so a replay changes nothing. One read of the keys present, then one unordered insert of the rest
   * (cheaper than per-row upserts on MongoDB-wire servers); the unique index settles concurrent inserts.
   */
  async storeOnce(records: readonly NewTelemetryRecord[]): Promise<{ stored: number; duplicates: number }> {
    if (!records.length) return { stored: 0, duplicates: 0 };
    const present = await this.presentKeys(records);
    const fresh = new Map<string, NewTelemetryRecord>();
    for (const r of records) if (!present.has(keyOf(r))) fresh.set(keyOf(r), r);
    const docs = [...fresh.values()].map((r) => ({ ...r, eventId: new Types.ObjectId(r.eventId) }));
    let stored = docs.length;
    if (docs.length) {
      try {
        await this.db.models.TelemetryRecord.insertMany(docs, { ordered: false });
      } catch (e) {
        const dup = duplicateCount(e);
        if (dup === null) throw e;
        stored -= dup;
      }
    }
    return { stored, duplicates: records.length - stored };
  }

  private async presentKeys(records: readonly NewTelemetryRecord[]): Promise<Set<string>> {
    const conferences = [...new Set(records.map((r) => r.conferenceId))];
    const sequences = [...new Set(records.map((r) => r.sequence))];
    const rows = await this.db.models.TelemetryRecord.find({ conferenceId: { $in: conferences }, sequence: { $in: sequences } }, { conferenceId: 1, sequence: 1, _id: 0 })
      .lean<{ conferenceId: string; sequence: number }[]>()
      .exec();
    return new Set(rows.map(keyOf));
  }

  listForConference(conferenceId: string): Promise<TelemetryRecord[]> {
    return this.db.models.TelemetryRecord.find({ conferenceId }).sort({ sequence: 1 }).lean<TelemetryRecord[]>().exec();
  }

  /** The event a conference belongs to, as first recorded (a conference never changes event). */
  async eventOfConference(conferenceId: string): Promise<string | null> {
    const r = await this.db.models.TelemetryRecord.findOne({ conferenceId }, { eventId: 1 }).lean<{ eventId: Types.ObjectId }>().exec();
    return r ? r.eventId.toHexString() : null;
  }

  async eventExists(eventId: string): Promise<boolean> {
    if (!Types.ObjectId.isValid(eventId)) return false;
    return Boolean(await this.db.models.Event.exists({ _id: new Types.ObjectId(eventId) }));
  }

  /** Sets the given flags to true; never clears one. */
  async raiseEventFlags(eventId: string, flags: EventFlags): Promise<void> {
    const $set = Object.fromEntries(Object.entries(flags).filter(([, v]) => v === true));
    if (!Object.keys($set).length) return;
    await this.db.models.Event.updateOne({ _id: new Types.ObjectId(eventId) }, { $set }).exec();
  }
}

const keyOf = (r: { conferenceId: string; sequence: number }) => `${r.conferenceId}#${r.sequence}`;

/** Number of duplicate-key rejections of an unordered insert, or null when the error is something else. */
function duplicateCount(e: unknown): number | null {
  type WriteError = { code?: number; err?: { code?: number } };
  const errors = (e as { writeErrors?: WriteError[] | WriteError }).writeErrors;
  const list = Array.isArray(errors) ? errors : errors ? [errors] : [];
  if (!list.length) return (e as { code?: number }).code === 11000 ? 1 : null;
  return list.every((w) => (w.code ?? w.err?.code) === 11000) ? list.length : null;
}
