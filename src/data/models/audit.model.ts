import { Schema, type InferSchemaType } from 'mongoose';

/** Audit trail of security-relevant actions (sign-in, lockout, impersonation, remote control...). */
export const AuditSchema = new Schema(
  {
    action: { type: String, required: true },
    actorId: { type: Schema.Types.ObjectId },
    subjectId: { type: Schema.Types.ObjectId },
    outcome: { type: String, enum: ['success', 'failure'], required: true },
    ip: String,
    details: { type: Schema.Types.Mixed },
  },
  { timestamps: { createdAt: true, updatedAt: false } },
);
AuditSchema.index({ action: 1, createdAt: -1 });
AuditSchema.index({ subjectId: 1, createdAt: -1 });

export type AuditDoc = InferSchemaType<typeof AuditSchema>;
