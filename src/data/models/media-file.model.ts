import { Schema, type InferSchemaType } from 'mongoose';
import { OUTBOX_FIELD, OUTBOX_INDEX } from '../outbox.js';

/**
 * Record of an uploaded file for an event or session. The bytes live in the object store under
 * `hash`; `clientRef` makes retried mobile uploads (syncFiles) idempotent.
 */
export const MediaFileSchema = new Schema(
  {
    hash: { type: String, required: true },
    size: { type: Number, required: true },
    contentType: { type: String, required: true },
    fileName: { type: String, required: true },
    extension: { type: String, required: true },
    ownerId: { type: Schema.Types.ObjectId, required: true },
    eventId: { type: Schema.Types.ObjectId },
    sessionId: { type: String },
    clientRef: { type: String, required: true, unique: true },
    kind: { type: String, enum: ['image', 'video', 'audio', 'document', 'recording', 'other'], required: true },
    thumbnailHash: String,
    thumbnailStatus: { type: String, enum: ['none', 'pending', 'ready', 'failed'], default: 'none' },
    width: Number,
    height: Number,
    /** Outbound events of this file's changes, not yet in the event log (decision 890). */
    outbox: OUTBOX_FIELD,
  },
  { timestamps: true },
);
MediaFileSchema.index({ eventId: 1, createdAt: -1 });
MediaFileSchema.index({ hash: 1 });
MediaFileSchema.index({ sessionId: 1, createdAt: -1 });
MediaFileSchema.index({ ownerId: 1, createdAt: -1 });
MediaFileSchema.index(OUTBOX_INDEX);

/** A share of a media file by path, optionally expiring. */
export const FileShareSchema = new Schema(
  {
    mediaFileId: { type: Schema.Types.ObjectId, required: true },
    path: { type: String, required: true, unique: true },
    createdBy: { type: Schema.Types.ObjectId, required: true },
    expiresAt: Date,
  },
  { timestamps: true },
);
FileShareSchema.index({ mediaFileId: 1 });

/**
 * Read access to content (by hash) granted to the members of an event by sharing it there (hub
 * shareImage): organizer, participants and attached devices read it while they are members.
 */
export const MediaGrantSchema = new Schema(
  {
    hash: { type: String, required: true },
    eventId: { type: Schema.Types.ObjectId, required: true },
    grantedBy: { type: Schema.Types.ObjectId, required: true },
  },
  { timestamps: true },
);
MediaGrantSchema.index({ hash: 1, eventId: 1 }, { unique: true });

export type MediaGrantDoc = InferSchemaType<typeof MediaGrantSchema>;
export type MediaFileDoc = InferSchemaType<typeof MediaFileSchema>;
export type FileShareDoc = InferSchemaType<typeof FileShareSchema>;
