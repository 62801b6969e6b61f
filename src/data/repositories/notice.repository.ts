import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import { ignoreDuplicate } from './duplicate-keys.js';
import type { NoticeDoc } from '../models/notice.model.js';

export type { NoticeRecord } from '../models/notice.model.js';
import type { NoticeRecord } from '../models/notice.model.js';

/**
 * System notices. At most one is current: saving retires the previous ones first, and readers take
 * the newest current one, so a race between two saves still yields a single answer (the later one).
 */
export class NoticeRepository {
  constructor(private readonly db: TenantDb) {}

  async replaceCurrent(n: {
    title: string;
    body: string;
    severity: 'info' | 'warning' | 'critical';
    createdBy: Types.ObjectId;
  }): Promise<NoticeRecord> {
    await this.clearCurrent();
    const doc = await this.db.models.Notice.create({ ...n, current: true });
    return doc.toObject() as NoticeRecord;
  }

  /** Returns how many notices were retired. */
  async clearCurrent(): Promise<number> {
    const r = await this.db.models.Notice.updateMany(
      { current: true },
      { $set: { current: false, clearedAt: new Date() } },
    ).exec();
    return r.modifiedCount;
  }

  current(): Promise<NoticeRecord | null> {
    return this.db.models.Notice.findOne({ current: true })
      .sort({ createdAt: -1, _id: -1 })
      .lean<NoticeRecord>()
      .exec();
  }

  findById(id: Types.ObjectId): Promise<NoticeRecord | null> {
    return this.db.models.Notice.findById(id).lean<NoticeRecord>().exec();
  }

  async acknowledge(noticeId: Types.ObjectId, userId: Types.ObjectId): Promise<void> {
    // A concurrent acknowledgement may meet the unique index first (FerretDB): the ack is stored either way.
    await this.db.models.NoticeAck.updateOne(
      { noticeId, userId },
      { $setOnInsert: { noticeId, userId } },
      { upsert: true },
    )
      .exec()
      .catch(ignoreDuplicate);
  }

  async acknowledgedAt(noticeId: Types.ObjectId, userId: Types.ObjectId): Promise<Date | null> {
    const ack = await this.db.models.NoticeAck.findOne({ noticeId, userId }).lean<{ createdAt?: Date }>().exec();
    return ack ? (ack.createdAt ?? new Date(0)) : null;
  }
}
