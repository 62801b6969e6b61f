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
   * so a replay changes nothing. Returns how many were new.
   */
  async storeOnce(records: readonly NewTelemetryRecord[]): Promise<{ stored: number; duplicates: number }> {
    if (!records.length) return { stored: 0, duplicates: 0 };
    const ops = records.map((r) => ({
      updateOne: {
        filter: { conferenceId: r.conferenceId, sequence: r.sequence },
        update: { $setOnInsert: { ...r, eventId: new Types.ObjectId(r.eventId) } },
        upsert: true,
      },
    }));
    const res = await this.db.models.TelemetryRecord.bulkWrite(ops, { ordered: false }).catch((e) => retryDuplicate(e, () => this.db.models.TelemetryRecord.bulkWrite(ops, { ordered: false })));
    const stored = res.upsertedCount ?? 0;
    return { stored, duplicates: records.length - stored };
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

/** Two concurrent upserts of the same key can race to a duplicate-key error; the second pass sees the row. */
async function retryDuplicate<T>(e: unknown, again: () => Promise<T>): Promise<T> {
  if ((e as { code?: number }).code === 11000 || /E11000/.test(String((e as Error)?.message))) return again();
  throw e;
}
