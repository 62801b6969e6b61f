import { Schema, type InferSchemaType } from 'mongoose';

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

export type OfflineTokenDoc = InferSchemaType<typeof OfflineTokenSchema>;
