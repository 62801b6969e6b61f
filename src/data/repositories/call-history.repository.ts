import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** A call as the call actor records it. */
export interface CallHistoryWrite {
  callId: string;
  callerId: string;
  participantIds: string[];
  status: 'ringing' | 'active' | 'ended' | 'missed' | 'cancelled';
  startedAt: Date;
  answeredAt?: Date;
  endedAt?: Date;
}

/**
 * Write side of call history (the read side is CallRecordRepository): one CallRecord per call id,
 * written by the call actor under its shard epoch. The filter matches only a record whose epoch is
 * not newer, so a paused old owner cannot overwrite what a newer owner wrote.
 */
export class CallHistoryRepository {
  constructor(private readonly db: TenantDb) {}

  /** Upserts the record; false when a newer epoch owns it (the write was fenced). */
  async save(call: CallHistoryWrite, epoch: number): Promise<boolean> {
    const set = {
      callerId: new Types.ObjectId(call.callerId),
      participantIds: call.participantIds.map((id) => new Types.ObjectId(id)),
      status: call.status,
      startedAt: call.startedAt,
      ...(call.answeredAt ? { answeredAt: call.answeredAt } : {}),
      ...(call.endedAt ? { endedAt: call.endedAt } : {}),
      actorEpoch: epoch,
    };
    try {
      await this.db.models.CallRecord.updateOne({ _id: call.callId, $or: [{ actorEpoch: { $lte: epoch } }, { actorEpoch: { $exists: false } }] }, { $set: set }, { upsert: true }).exec();
      return true;
    } catch (e) {
      if ((e as { code?: number }).code === 11000) return false;
      throw e;
    }
  }
}
