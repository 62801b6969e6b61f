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
    /** Derived from a realm session (QR approved with an identity-provider token): it dies with that realm session. */
    parentIdpSid: String,
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
SessionSchema.index({ parentIdpSid: 1 });

export type SessionDoc = InferSchemaType<typeof SessionSchema>;
