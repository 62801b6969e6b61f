import { type HydratedDocument, Schema, type InferSchemaType } from 'mongoose';
import { OUTBOX_FIELD, OUTBOX_INDEX } from '../outbox.js';

/** A row of an uploaded pending-users spreadsheet; `username` is the natural key rows upsert on. */
export const PendingUserSchema = new Schema(
  {
    username: { type: String, required: true, unique: true, lowercase: true, trim: true },
    email: { type: String, lowercase: true, trim: true },
    displayName: { type: String, required: true },
    role: { type: String, required: true },
    importId: { type: String, required: true },
    rowNumber: { type: Number, required: true },
    status: { type: String, enum: ['pending', 'activated'], default: 'pending' },
    /** Set by activation: when, by which admin, and the account it made (or found). */
    activatedAt: Date,
    activatedBy: { type: Schema.Types.ObjectId },
    userId: { type: Schema.Types.ObjectId },
  },
  { timestamps: true },
);
PendingUserSchema.index({ importId: 1, rowNumber: 1 });
// The admin's list: by status in username order (and a username prefix search within it).
PendingUserSchema.index({ status: 1, username: 1 });
// An import's rows still to activate, in sheet order.
PendingUserSchema.index({ importId: 1, status: 1, rowNumber: 1 });

/** One spreadsheet import: progress and the per-row error report. */
export const ImportSchema = new Schema(
  {
    _id: { type: String },
    fileHash: { type: String, required: true },
    fileName: { type: String, required: true },
    requestedBy: { type: Schema.Types.ObjectId, required: true },
    status: { type: String, enum: ['queued', 'running', 'completed', 'failed'], default: 'queued' },
    rowsTotal: { type: Number, default: 0 },
    rowsDone: { type: Number, default: 0 },
    rowsImported: { type: Number, default: 0 },
    rowErrors: { type: [{ row: Number, field: String, message: String, _id: false }], default: [] },
    /** Every row error found; `rowErrors` keeps only the first ones (the report is capped). */
    rowErrorCount: { type: Number, default: 0 },
    startedAt: Date,
    finishedAt: Date,
    error: String,
    /** Outbound events of this import's changes, not yet in the event log (decision 890). */
    outbox: OUTBOX_FIELD,
  },
  { timestamps: true },
);
// The admin's list of imports, newest first.
ImportSchema.index({ createdAt: -1 });
ImportSchema.index(OUTBOX_INDEX);

export type PendingUserDoc = InferSchemaType<typeof PendingUserSchema>;
export type ImportDoc = InferSchemaType<typeof ImportSchema>;

/** A stored document as read (lean, with its id and timestamps). */
export type ImportRecord = HydratedDocument<ImportDoc>;
