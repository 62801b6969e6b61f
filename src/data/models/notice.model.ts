import { Types, Schema, type InferSchemaType } from 'mongoose';

/** A tenant-wide system notice; at most one has `current: true` (enforced by NoticeRepository). */
export const NoticeSchema = new Schema(
  {
    title: { type: String, required: true },
    body: { type: String, required: true },
    severity: { type: String, enum: ['info', 'warning', 'critical'], default: 'info' },
    current: { type: Boolean, default: true },
    createdBy: { type: Schema.Types.ObjectId, required: true },
    clearedAt: Date,
  },
  { timestamps: true },
);
NoticeSchema.index({ current: 1, createdAt: -1 });

/** A user's acknowledgement of a notice. */
export const NoticeAckSchema = new Schema(
  {
    noticeId: { type: Schema.Types.ObjectId, required: true },
    userId: { type: Schema.Types.ObjectId, required: true },
  },
  { timestamps: true },
);
NoticeAckSchema.index({ noticeId: 1, userId: 1 }, { unique: true });

export type NoticeDoc = InferSchemaType<typeof NoticeSchema>;
export type NoticeAckDoc = InferSchemaType<typeof NoticeAckSchema>;

/** A stored document as read (lean, with its id and timestamps). */
export type NoticeRecord = NoticeDoc & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };
