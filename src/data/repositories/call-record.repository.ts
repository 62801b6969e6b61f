import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** Read side of call history: who a user talks to (frequent contacts, the call list). */
export class CallRecordRepository {
  constructor(private readonly db: TenantDb) {}

  /** Counterparts of a user's most recent calls, most recent first (duplicates kept; callers rank them). */
  async recentCounterparts(userId: Types.ObjectId, limitCalls: number): Promise<{ id: Types.ObjectId; at: Date }[]> {
    const rows = await this.db.models.CallRecord.find({ $or: [{ callerId: userId }, { participantIds: userId }] }, { callerId: 1, participantIds: 1, startedAt: 1 })
      .sort({ startedAt: -1 })
      .limit(limitCalls)
      .lean<{ callerId: Types.ObjectId; participantIds: Types.ObjectId[]; startedAt: Date }[]>()
      .exec();
    return rows.flatMap((r) =>
      [r.callerId, ...r.participantIds].filter((p) => p && !p.equals(userId)).map((id) => ({ id, at: r.startedAt })),
    );
  }
}
