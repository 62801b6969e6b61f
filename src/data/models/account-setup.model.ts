import { Schema, type InferSchemaType } from 'mongoose';

/**
 * How an account without a credential gets one. `password` (embedded realm): a one-time set-password
 * link whose token is stored only as its SHA-256 (`_id`); used once, or superseded by a newer link.
 * `binding` (external identity provider): the account is bound to the first identity-provider subject
 * that signs in with this email (verified) or username.
 */
export const AccountSetupSchema = new Schema(
  {
    _id: { type: String },
    kind: { type: String, enum: ['password', 'binding'], required: true },
    userId: { type: Schema.Types.ObjectId, required: true },
    /** Why it was issued: the tenant's first admin, or the activation of an imported user. */
    purpose: { type: String, enum: ['first-admin', 'activation'], required: true },
    email: { type: String, lowercase: true, trim: true },
    username: { type: String, lowercase: true, trim: true },
    expiresAt: { type: Date, required: true },
    usedAt: Date,
    supersededAt: Date,
    createdBy: String,
  },
  { timestamps: true },
);
AccountSetupSchema.index({ userId: 1, kind: 1 });
AccountSetupSchema.index({ kind: 1, email: 1 });
AccountSetupSchema.index({ kind: 1, username: 1 });

export type AccountSetupDoc = InferSchemaType<typeof AccountSetupSchema>;
