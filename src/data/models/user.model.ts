import { Schema, type InferSchemaType, type HydratedDocument } from 'mongoose';

/**
 * A person (or a headset's service account) of the tenant: the contact of the directory and the
 * subject of tokens. `initial` is the alphabet bucket of the contact index, kept on write.
 */
export const UserSchema = new Schema(
  {
    username: { type: String, required: true, unique: true, lowercase: true, trim: true },
    idpSubject: { type: String, required: true, unique: true },
    email: { type: String, lowercase: true, trim: true },
    displayName: { type: String, required: true, trim: true },
    firstName: { type: String, trim: true },
    lastName: { type: String, trim: true },
    sortName: { type: String, required: true },
    initial: { type: String, required: true },
    kind: { type: String, enum: ['person', 'device'], default: 'person', required: true },
    role: { type: String, required: true, default: 'patient' },
    status: { type: String, enum: ['active', 'pending', 'disabled'], default: 'active', required: true },
    title: String,
    department: String,
    phone: String,
    avatarHash: String,
    /** scrypt hash of the password the embedded identity provider checks (absent for external IdP users). */
    passwordHash: String,
    pinHash: String,
    pinHistory: { type: [String], default: [] },
    pinSetAt: Date,
    lastSeenAt: Date,
  },
  { timestamps: true },
);
UserSchema.index({ sortName: 1, _id: 1 });
UserSchema.index({ initial: 1, sortName: 1 });
UserSchema.index({ status: 1, sortName: 1 });

export type UserDoc = InferSchemaType<typeof UserSchema>;
export type User = HydratedDocument<UserDoc>;

/** Normalises a name into the sort key and alphabet bucket used by contact search and `contactAlphabets`. */
export function sortKeys(displayName: string): { sortName: string; initial: string } {
  const sortName = displayName.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').trim().toLowerCase();
  const first = sortName.charAt(0).toUpperCase();
  return { sortName, initial: /[A-Z]/.test(first) ? first : '#' };
}
