import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { ParticipantLogDoc } from '../models/telemetry.model.js';
import { isDuplicateKeyOnly } from './duplicate-keys.js';

export type ParticipantLogRecord = ParticipantLogDoc & { _id: Types.ObjectId };

export interface LedgerEntry {
  participantKey: string;
  userId?: string;
  displayName?: string;
  /** The client the participant joined from, as the video conferencing system reported it. */
  device?: string;
  joinedAt: Date;
  leftAt: Date;
  durationSeconds: number;
  /** The participant's recording consent answers (decision 910), kept with the ledger. */
  recordingConsents?: { requestId: string; consent: boolean; at: Date; late: boolean }[];
}

/** The ledger of a consultation: one row per participant session, keyed by (event, participant, join time). */
export class ParticipantLogRepository {
  constructor(private readonly db: TenantDb) {}

  /**
   * Writes the ledger by natural key (event, participant, join time): rows missing are inserted in one
   * unordered insert, rows whose leave time changed are updated, identical rows are left alone, so
   * writing the same ledger twice changes nothing. (Per-row upserts are slow on MongoDB-wire servers.)
   */
  async upsertMany(
    eventId: string,
    conferenceId: string,
    entries: readonly LedgerEntry[],
  ): Promise<{ inserted: number; updated: number }> {
    if (!entries.length) return { inserted: 0, updated: 0 };
    const event = new Types.ObjectId(eventId);
    const existing = new Map((await this.listForEvent(eventId)).map((r) => [keyOf(r), r]));
    const missing = entries.filter((e) => !existing.has(keyOf(e)));
    const changed = entries.filter((e) => {
      const row = existing.get(keyOf(e));
      return row && (row.leftAt?.getTime() !== e.leftAt.getTime() || row.durationSeconds !== e.durationSeconds);
    });
    let inserted = missing.length;
    if (missing.length) {
      const docs = missing.map((e) => ({
        ...e,
        eventId: event,
        conferenceId,
        userId: e.userId && Types.ObjectId.isValid(e.userId) ? new Types.ObjectId(e.userId) : undefined,
      }));
      try {
        await this.db.models.ParticipantLog.insertMany(docs, { ordered: false });
      } catch (e) {
        if (!isDuplicateKeyOnly(e)) throw e;
        inserted = 0;
      }
    }
    for (const e of changed) {
      await this.db.models.ParticipantLog.updateOne(
        { eventId: event, participantKey: e.participantKey, joinedAt: e.joinedAt },
        { $set: { leftAt: e.leftAt, durationSeconds: e.durationSeconds } },
      ).exec();
    }
    return { inserted, updated: changed.length };
  }

  /** One page of an event's ledger in join order (`_id` breaks ties), and its length (decision 940). */
  async page(
    eventId: string,
    page: { skip: number; take: number },
  ): Promise<{ items: ParticipantLogRecord[]; total: number }> {
    const filter = { eventId: new Types.ObjectId(eventId) };
    const [items, total] = await Promise.all([
      this.db.models.ParticipantLog.find(filter)
        .sort({ joinedAt: 1, participantKey: 1, _id: 1 })
        .skip(page.skip)
        .limit(page.take)
        .lean<ParticipantLogRecord[]>()
        .exec(),
      this.db.models.ParticipantLog.countDocuments(filter).exec(),
    ]);
    return { items, total };
  }

  listForEvent(eventId: string): Promise<ParticipantLogRecord[]> {
    return this.db.models.ParticipantLog.find({ eventId: new Types.ObjectId(eventId) })
      .sort({ joinedAt: 1, participantKey: 1 })
      .lean<ParticipantLogRecord[]>()
      .exec();
  }
}

const keyOf = (r: { participantKey: string; joinedAt: Date }) => `${r.participantKey}@${r.joinedAt.getTime()}`;
