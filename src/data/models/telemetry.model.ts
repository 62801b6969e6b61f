import { Schema, type InferSchemaType } from 'mongoose';

/** One raw telemetry message from the video conferencing system; (conferenceId, sequence) is unique. */
export const TelemetryRecordSchema = new Schema(
  {
    conferenceId: { type: String, required: true },
    sequence: { type: Number, required: true },
    eventId: { type: Schema.Types.ObjectId, required: true },
    type: { type: String, required: true },
    occurredAt: { type: Date, required: true },
    payload: { type: Schema.Types.Mixed, default: {} },
  },
  { timestamps: { createdAt: true, updatedAt: false } },
);
TelemetryRecordSchema.index({ conferenceId: 1, sequence: 1 }, { unique: true });
TelemetryRecordSchema.index({ eventId: 1 });

/** The ledger: one participant's presence in a completed consultation. */
export const ParticipantLogSchema = new Schema(
  {
    eventId: { type: Schema.Types.ObjectId, required: true },
    conferenceId: { type: String, required: true },
    participantKey: { type: String, required: true },
    userId: { type: Schema.Types.ObjectId },
    displayName: String,
    joinedAt: { type: Date, required: true },
    leftAt: Date,
    durationSeconds: Number,
  },
  { timestamps: true },
);
ParticipantLogSchema.index({ eventId: 1, participantKey: 1, joinedAt: 1 }, { unique: true });

export type TelemetryRecordDoc = InferSchemaType<typeof TelemetryRecordSchema>;
export type ParticipantLogDoc = InferSchemaType<typeof ParticipantLogSchema>;
