import { Schema, type InferSchemaType } from 'mongoose';

/**
 * The tenant's audit trail, hash-chained (docs/audit.md, decision 880). `_id` is the entry's position in
 * the chain: the primary key is what makes two writers unable to take one position, so the chain cannot
 * fork whatever indexes a tenant database has. Entries are inserted once and never updated.
 */
export const AuditSchema = new Schema(
  {
    _id: { type: Number, required: true },
    id: { type: String, required: true },
    createdAt: { type: Date, required: true, default: () => new Date() },
    action: { type: String, required: true },
    outcome: { type: String, enum: ['success', 'failure'], required: true },
    actorId: String,
    subjectId: String,
    eventId: String,
    ip: String,
    details: { type: Schema.Types.Mixed },
    prev: { type: String, required: true },
    hash: { type: String, required: true },
  },
  { versionKey: false },
);
AuditSchema.index({ action: 1, _id: -1 });
AuditSchema.index({ subjectId: 1, _id: -1 });
AuditSchema.index({ actorId: 1, _id: -1 });
AuditSchema.index({ eventId: 1, _id: -1 });
AuditSchema.index({ createdAt: -1 });

export type AuditDoc = InferSchemaType<typeof AuditSchema>;

/** Signed chain heads (decision 881): `_id` is the head's seq, so one head is signed once. */
export const AuditCheckpointSchema = new Schema(
  {
    _id: { type: Number, required: true },
    hash: { type: String, required: true },
    createdAt: { type: Date, required: true, default: () => new Date() },
    kid: { type: String, required: true },
    /** JWS (compact, ES256) over the canonical checkpoint statement. */
    jws: { type: String, required: true },
    /** The public key that verifies `jws`, kept because signing keys rotate out after a day. */
    jwk: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false },
);

export type AuditCheckpointDoc = InferSchemaType<typeof AuditCheckpointSchema>;
