import { Schema, type InferSchemaType } from 'mongoose';

/** A tenant role and the permissions it grants; built-in roles are seeded by migrations. */
export const RoleSchema = new Schema(
  {
    name: { type: String, required: true, unique: true, lowercase: true, trim: true },
    description: String,
    permissions: { type: [String], default: [] },
    builtin: { type: Boolean, default: false },
  },
  { timestamps: true },
);

export type RoleDoc = InferSchemaType<typeof RoleSchema>;
