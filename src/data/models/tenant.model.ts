import { Schema, type InferSchemaType } from 'mongoose';

/** Catalog entry of a tenant: its name is the subdomain, the realm name and the database suffix. */
export const TenantSchema = new Schema(
  {
    name: { type: String, required: true, unique: true, lowercase: true, trim: true },
    displayName: { type: String, required: true },
    status: { type: String, enum: ['active', 'suspended'], default: 'active', required: true },
    schemaVersion: { type: Number, default: 0, required: true },
    /** SHA-256 of the shared credential the video conferencing system presents to the telemetry ingest. */
    telemetryKeyHash: { type: String },
  },
  { timestamps: true },
);

export type TenantDoc = InferSchemaType<typeof TenantSchema>;
