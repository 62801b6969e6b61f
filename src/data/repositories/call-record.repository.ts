import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** A call as the call actor records it. */
export interface CallRecordWrite {
  callId: string;
  callerId: string;
  participantIds: string[];
  status: 'ringing' | 'active' | 'ended' | 'missed' | 'cancelled';
  startedAt: Date;
  answeredAt?: Date;
  endedAt?: Date;
}

/**
 * Call history: one CallRecord per call id. The call actor writes it under its shard epoch (the filter
 * matches only a record whose epoch is not newer, so a paused old owner cannot overwrite what a newer
 * owner wrote); reads answer who a user talks to (frequent contacts, the call list).
 */
export class CallRecordRepository {
  constructor(private readonly db: TenantDb) {}

  /** Upserts the record; false when a newer epoch owns it (the write was fenced). */
  async save(call: CallRecordWrite, epoch: number): Promise<boolean> {
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
      await this.db.models.CallRecord.updateOne(
        { _id: call.callId, $or: [{ actorEpoch: { $lte: epoch } }, { actorEpoch: { $exists: false } }] },
        { $set: set },
        { upsert: true },
      ).exec();
      return true;
    } catch (e) {
      if ((e as { code?: number }).code === 11000) return false;
      throw e;
    }
  }

  /** Counterparts of a user's most recent calls, most recent first (duplicates kept; callers rank them). */
  /** Whether the call `callId` exists and `userId` placed it or takes part in it. */
  async isMember(callId: string, userId: Types.ObjectId): Promise<boolean> {
    return Boolean(
      await this.db.models.CallRecord.exists({ _id: callId, $or: [{ callerId: userId }, { participantIds: userId }] }),
    );
  }

  /** The recorded status of the call, none when there is no record. */
  async statusOf(callId: string): Promise<CallRecordWrite['status'] | undefined> {
    const r = await this.db.models.CallRecord.findById(callId, { status: 1 })
      .lean<{ status: CallRecordWrite['status'] }>()
      .exec();
    return r?.status;
  }

  async exists(callId: string): Promise<boolean> {
    return Boolean(await this.db.models.CallRecord.exists({ _id: callId }));
  }

  async recentCounterparts(userId: Types.ObjectId, limitCalls: number): Promise<{ id: Types.ObjectId; at: Date }[]> {
    const rows = await this.db.models.CallRecord.find(
      { $or: [{ callerId: userId }, { participantIds: userId }] },
      { callerId: 1, participantIds: 1, startedAt: 1 },
    )
      .sort({ startedAt: -1 })
      .limit(limitCalls)
      .lean<{ callerId: Types.ObjectId; participantIds: Types.ObjectId[]; startedAt: Date }[]>()
      .exec();
    return rows.flatMap((r) =>
      [r.callerId, ...r.participantIds].filter((p) => p && !p.equals(userId)).map((id) => ({ id, at: r.startedAt })),
    );
  }
}
