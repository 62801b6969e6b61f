import { Schema, type InferSchemaType } from 'mongoose';

/** History of calls; feeds `frequent` contacts and the call list. */
export const CallRecordSchema = new Schema(
  {
    _id: { type: String },
    callerId: { type: Schema.Types.ObjectId, required: true },
    participantIds: { type: [Schema.Types.ObjectId], default: [] },
    status: { type: String, enum: ['ringing', 'active', 'ended', 'missed', 'cancelled'], required: true },
    startedAt: { type: Date, required: true },
    answeredAt: Date,
    endedAt: Date,
    /** Fencing token of the call actor's shard at the last write (a stale owner's write is refused). */
    actorEpoch: Number,
  },
  { timestamps: true },
);
CallRecordSchema.index({ participantIds: 1, startedAt: -1 });
CallRecordSchema.index({ callerId: 1, startedAt: -1 });

export type CallRecordDoc = InferSchemaType<typeof CallRecordSchema>;
