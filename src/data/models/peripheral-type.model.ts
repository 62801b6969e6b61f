import { Types, Schema, type InferSchemaType } from 'mongoose';

/** A kind of peripheral (headset, camera, USB stethoscope); seeded per tenant by migrations. */
export const PeripheralTypeSchema = new Schema(
  {
    key: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    capabilities: { type: [String], default: [] },
  },
  { timestamps: true },
);

export type PeripheralTypeDoc = InferSchemaType<typeof PeripheralTypeSchema>;

/** A stored document as read (lean, with its id and timestamps). */
export type PeripheralTypeRecord = PeripheralTypeDoc & { _id: Types.ObjectId };
