import { Schema, type InferSchemaType } from 'mongoose';
import { OUTBOX_FIELD, OUTBOX_INDEX } from '../outbox.js';

/**
 * One raw telemetry message from the video conferencing system. Its `_id` is the natural key
 * `${conferenceId}:${sequence}` (telemetryRecordId), so storing once is a plain insert whose
 * duplicate-key refusal means "replay": the `_id` index is the one every MongoDB-wire server resolves
 * without a scan. The unique (conferenceId, sequence) index says the same thing and serves the
 * per-conference reads in sequence order.
 */
export const TelemetryRecordSchema = new Schema(
  {
    _id: { type: String, required: true },
    conferenceId: { type: String, required: true },
    sequence: { type: Number, required: true },
    eventId: { type: Schema.Types.ObjectId, required: true },
    type: { type: String, required: true },
    occurredAt: { type: Date, required: true },
    payload: { type: Schema.Types.Mixed, default: {} },
    /** Outbound events of this record, not yet in the event log (decision 890). */
    outbox: OUTBOX_FIELD,
  },
  { timestamps: { createdAt: true, updatedAt: false } },
);
TelemetryRecordSchema.index({ conferenceId: 1, sequence: 1 }, { unique: true });
TelemetryRecordSchema.index({ eventId: 1 });
TelemetryRecordSchema.index(OUTBOX_INDEX);

/**
 * Which event a conference belongs to, written once by the first batch that names the conference
 * (`_id` is the conferenceId, so the insert itself settles a race) and never changed.
 */
export const ConferenceBindingSchema = new Schema(
  {
    _id: { type: String, required: true },
    eventId: { type: Schema.Types.ObjectId, required: true },
  },
  { timestamps: { createdAt: true, updatedAt: false } },
);

/** The ledger: one participant's presence in a completed consultation. */
export const ParticipantLogSchema = new Schema(
  {
    eventId: { type: Schema.Types.ObjectId, required: true },
    conferenceId: { type: String, required: true },
    participantKey: { type: String, required: true },
    userId: { type: Schema.Types.ObjectId },
    displayName: String,
    /** The client the participant joined from (ParticipantJoined.device), when the VCS names it. */
    device: String,
    joinedAt: { type: Date, required: true },
    leftAt: Date,
    durationSeconds: Number,
    /** This participant's recording consent answers, copied from the event by completion (decision 910). */
    recordingConsents: {
      type: [new Schema({ requestId: String, consent: Boolean, at: Date, late: Boolean }, { _id: false })],
      default: undefined,
    },
  },
  { timestamps: true },
);
ParticipantLogSchema.index({ eventId: 1, participantKey: 1, joinedAt: 1 }, { unique: true });

export type TelemetryRecordDoc = InferSchemaType<typeof TelemetryRecordSchema>;
export type ConferenceBindingDoc = InferSchemaType<typeof ConferenceBindingSchema>;
export type ParticipantLogDoc = InferSchemaType<typeof ParticipantLogSchema>;
