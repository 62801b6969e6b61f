import { Schema, type InferSchemaType } from 'mongoose';

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
    /** Approved with an identity-provider token: its realm session (`sid`), which the redeemed session ends with. */
    approvedIdpSid: String,
    approvedPermissions: { type: [String], default: undefined },
    expiresAt: { type: Date, required: true },
    extendedCount: { type: Number, default: 0 },
    redeemedAt: Date,
    refusedAt: Date,
  },
  { timestamps: true },
);

export type LoginCodeDoc = InferSchemaType<typeof LoginCodeSchema>;
