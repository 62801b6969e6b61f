import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A physical device mapped to a peripheral type. `fingerprint` (type + sorted physical ids) is the
 * natural key that makes getDevice idempotent; `deviceKey` is the secret handed back to the device.
 */
export const DeviceSchema = new Schema(
  {
    typeId: { type: Schema.Types.ObjectId, required: true },
    physicalIds: { type: [String], required: true },
    fingerprint: { type: String, required: true, unique: true },
    deviceKeyHash: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    ownerUserId: { type: Schema.Types.ObjectId },
    status: { type: String, enum: ['online', 'offline'], default: 'offline', required: true },
    lastHeartbeatAt: Date,
    info: { type: Schema.Types.Mixed, default: {} },
  },
  { timestamps: true },
);
DeviceSchema.index({ ownerUserId: 1 });
DeviceSchema.index({ typeId: 1 });
/** Resolves a hardware id (one of the ids getDevice mapped) to its device: docs/decisions/312. */
DeviceSchema.index({ physicalIds: 1, createdAt: 1 });

export type DeviceDoc = InferSchemaType<typeof DeviceSchema>;
