import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { ParticipantLogDoc } from '../models/telemetry.model.js';

export type ParticipantLogRecord = ParticipantLogDoc & { _id: Types.ObjectId };

export interface LedgerEntry {
  participantKey: string;
  userId?: string;
  displayName?: string;
  joinedAt: Date;
  leftAt: Date;
  durationSeconds: number;
}

/** The ledger of a consultation: one row per participant session, keyed by (event, participant, join time). */
export class ParticipantLogRepository {
  constructor(private readonly db: TenantDb) {}

  /** Upserts every entry by its natural key, so writing the same ledger twice leaves one row each. */
  async upsertMany(eventId: string, conferenceId: string, entries: readonly LedgerEntry[]): Promise<{ inserted: number }> {
    if (!entries.length) return { inserted: 0 };
    const event = new Types.ObjectId(eventId);
    const ops = entries.map((e) => ({
      updateOne: {
        filter: { eventId: event, participantKey: e.participantKey, joinedAt: e.joinedAt },
        update: {
          $set: { leftAt: e.leftAt, durationSeconds: e.durationSeconds, ...(e.displayName ? { displayName: e.displayName } : {}) },
          $setOnInsert: { conferenceId, ...(e.userId && Types.ObjectId.isValid(e.userId) ? { userId: new Types.ObjectId(e.userId) } : {}) },
        },
        upsert: true,
      },
    }));
    const res = await this.db.models.ParticipantLog.bulkWrite(ops, { ordered: false });
    return { inserted: res.upsertedCount ?? 0 };
  }

  listForEvent(eventId: string): Promise<ParticipantLogRecord[]> {
    return this.db.models.ParticipantLog.find({ eventId: new Types.ObjectId(eventId) }).sort({ joinedAt: 1, participantKey: 1 }).lean<ParticipantLogRecord[]>().exec();
  }
}
