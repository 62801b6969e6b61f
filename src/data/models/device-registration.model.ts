import { Schema, type InferSchemaType } from 'mongoose';

/**
 * Which device account may speak for a hardware id (decision 1041): made by an administrator, or by a
 * signed-in clinician or administrator entering the pairing code the device showed. `_id` is the
 * hardware id (or device id) as the headset names it in `initRapidConnect`.
 */
export const DeviceRegistrationSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: Schema.Types.ObjectId, required: true },
    via: { type: String, enum: ['admin', 'pairing'], required: true },
    by: { type: Schema.Types.ObjectId, required: true },
  },
  { timestamps: true },
);
DeviceRegistrationSchema.index({ accountId: 1 });

export type DeviceRegistrationDoc = InferSchemaType<typeof DeviceRegistrationSchema>;

/** A pairing code a device account asked for, kept by its SHA-256 only until it is used or expires. */
export const DevicePairingSchema = new Schema(
  {
    _id: { type: String, required: true },
    hardwareId: { type: String, required: true },
    accountId: { type: Schema.Types.ObjectId, required: true },
    expiresAt: { type: Date, required: true },
  },
  { timestamps: true },
);
DevicePairingSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export type DevicePairingDoc = InferSchemaType<typeof DevicePairingSchema>;
