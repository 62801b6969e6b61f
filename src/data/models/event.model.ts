import { Schema, Types, type InferSchemaType, type HydratedDocument } from 'mongoose';
import { OUTBOX_FIELD, OUTBOX_INDEX } from '../outbox.js';

/** The statuses an event is stored with; the transitions between them are core's (src/core/meetings/event-status.ts). */
export const EVENT_STATUSES = ['scheduled', 'started', 'ended', 'completed', 'cancelled'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

const ParticipantSchema = new Schema(
  {
    userId: { type: Schema.Types.ObjectId, required: true },
    role: { type: String, enum: ['host', 'participant', 'guest'], default: 'participant', required: true },
  },
  { _id: false },
);

const AttachmentSchema = new Schema(
  {
    mediaFileId: { type: Schema.Types.ObjectId, required: true },
    name: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { _id: false },
);

/** One person's answer to a recording consent request (decision 910): who, when, what was asked, the answer. */
const RecordingConsentSchema = new Schema(
  {
    /** `requestId:userId`: one answer per person and request, so a retried write adds nothing. */
    key: { type: String, required: true },
    requestId: { type: String, required: true },
    userId: { type: Schema.Types.ObjectId, required: true },
    username: { type: String, required: true },
    role: { type: String, required: true },
    tenantRole: { type: String, default: '' },
    question: { type: String, required: true },
    reason: String,
    policy: { type: String, enum: ['all', 'patients'], required: true },
    requestedBy: { type: Schema.Types.ObjectId },
    requestedAt: { type: Date, required: true },
    consent: { type: Boolean, required: true },
    at: { type: Date, required: true },
    late: { type: Boolean, default: false },
    implicit: { type: Boolean, default: false },
  },
  { _id: false },
);

/** A scheduled consultation. `meetingCode` is the join code guests and headsets use. */
export const EventSchema = new Schema(
  {
    name: { type: String, required: true, trim: true },
    nameLower: { type: String, required: true },
    description: String,
    startAt: { type: Date, required: true },
    endAt: { type: Date, required: true },
    organizerId: { type: Schema.Types.ObjectId, required: true },
    participants: { type: [ParticipantSchema], default: [] },
    participantIds: { type: [Schema.Types.ObjectId], default: [] },
    /** Device accounts (headsets) attached to the event by join code (addDeviceToEvent). */
    deviceIds: { type: [Schema.Types.ObjectId], default: [] },
    attachments: { type: [AttachmentSchema], default: [] },
    status: { type: String, enum: EVENT_STATUSES, default: 'scheduled', required: true },
    meetingCode: { type: String, required: true, unique: true },
    /** Overrides the tenant's waiting room setting (decision 870); null = the tenant's. */
    waitingRoom: { type: Boolean, default: null },
    room: {
      provider: String,
      roomName: String,
      url: String,
      assignedAt: Date,
    },
    /** Recording consent answers, in the order given (decision 910). */
    recordingConsents: { type: [RecordingConsentSchema], default: [] },
    hasLedger: { type: Boolean, default: false },
    hasRecording: { type: Boolean, default: false },
    hasChat: { type: Boolean, default: false },
    startedAt: Date,
    endedAt: Date,
    /**
     * The meeting's last meetingEvent number, kept with its end by the meeting actor (decision 1104): an
     * actor whose snapshot expired numbers on from it and shows it. Absent until the meeting ends.
     */
    meetingSeq: Number,
    completedAt: Date,
    cancelledAt: Date,
    cancelReason: String,
    /** Outbound events of this event's changes, not yet in the event log (decision 890). */
    outbox: OUTBOX_FIELD,
  },
  { timestamps: true },
);
// A caller's event list is the $or of these three, each read in (startAt, _id) order from its own
// index and merged, from a page key on (docs/decisions/213-event-list-page-keys.md).
EventSchema.index({ participantIds: 1, startAt: -1, _id: -1 });
EventSchema.index({ organizerId: 1, startAt: -1, _id: -1 });
EventSchema.index({ deviceIds: 1, startAt: -1, _id: -1 });
EventSchema.index({ status: 1, startAt: 1 });
EventSchema.index({ nameLower: 1 });
EventSchema.index(OUTBOX_INDEX);

export type EventDoc = InferSchemaType<typeof EventSchema>;
export { Types };

/** A stored document as read (lean, with its id and timestamps). */
export type EventRecord = EventDoc & { _id: Types.ObjectId; createdAt?: Date; updatedAt?: Date };
