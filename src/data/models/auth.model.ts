import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A sign-in session. Refresh tokens rotate: `refreshHash` is the current one; presenting an older
 * one (`previousHashes`) is reuse and revokes the session.
 */
export const SessionSchema = new Schema(
  {
    _id: { type: String },
    userId: { type: Schema.Types.ObjectId, required: true },
    method: { type: String, enum: ['oidc', 'qr', 'pin', 'offline', 'impersonation', 'device'], required: true },
    refreshHash: { type: String, required: true, unique: true },
    previousHashes: { type: [String], default: [] },
    actorUserId: { type: Schema.Types.ObjectId },
    purpose: String,
    offlineTokenId: String,
    /** Derived sessions (QR approval, impersonation): the session that minted this one; it dies with it. */
    parentSessionId: String,
    /** Derived sessions: the minting session's permissions, which this session never exceeds. */
    permissionCap: { type: [String], default: undefined },
    /** Realm session (`sid`) this session was opened from (authorization-code sign-in). */
    idpSid: String,
    expiresAt: { type: Date, required: true },
    revokedAt: Date,
    revokeReason: String,
    lastUsedAt: Date,
    userAgent: String,
    ip: String,
  },
  { timestamps: true },
);
SessionSchema.index({ userId: 1, revokedAt: 1 });
SessionSchema.index({ previousHashes: 1 });
SessionSchema.index({ parentSessionId: 1 });

/** A QR login code: pending -> approved -> redeemed, or expired (checked by time). */
export const LoginCodeSchema = new Schema(
  {
    code: { type: String, required: true, unique: true },
    pollSecretHash: { type: String, required: true },
    status: { type: String, enum: ['pending', 'approved', 'redeemed', 'refused'], default: 'pending', required: true },
    deviceName: String,
    /** Where the device asked from, shown to the user asked to approve. */
    requestedFrom: { ip: String, userAgent: String },
    approvedBy: { type: Schema.Types.ObjectId },
    /** The approving session and what it held: the redeemed session is derived from it. */
    approvedSessionId: String,
    approvedPermissions: { type: [String], default: undefined },
    expiresAt: { type: Date, required: true },
    extendedCount: { type: Number, default: 0 },
    redeemedAt: Date,
    refusedAt: Date,
  },
  { timestamps: true },
);

/** An offline token: purpose-scoped, stored hashed, revocable. */
export const OfflineTokenSchema = new Schema(
  {
    tokenHash: { type: String, required: true, unique: true },
    userId: { type: Schema.Types.ObjectId, required: true },
    purpose: { type: String, required: true },
    permissions: { type: [String], default: [] },
    /** Set when issued by a derived session: the token is revoked with that session. */
    parentSessionId: String,
    expiresAt: { type: Date, required: true },
    revokedAt: Date,
    lastUsedAt: Date,
  },
  { timestamps: true },
);
OfflineTokenSchema.index({ userId: 1, purpose: 1 });
OfflineTokenSchema.index({ parentSessionId: 1 });

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

export type SessionDoc = InferSchemaType<typeof SessionSchema>;
export type LoginCodeDoc = InferSchemaType<typeof LoginCodeSchema>;
export type OfflineTokenDoc = InferSchemaType<typeof OfflineTokenSchema>;
export type AuditDoc = InferSchemaType<typeof AuditSchema>;
