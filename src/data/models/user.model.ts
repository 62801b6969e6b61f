import { Schema, type InferSchemaType, type HydratedDocument } from 'mongoose';
import { foldName, nameTokens } from './name-tokens.js';

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
    /** Folded name and username tokens searched by prefix (name-tokens.ts); absent until migration 6 ran. */
    nameTokens: { type: [String], default: undefined },
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
/** Contact search: an anchored prefix regex on a multikey index is an index range (decision 211). */
UserSchema.index({ nameTokens: 1 });

export type UserDoc = InferSchemaType<typeof UserSchema>;
export type User = HydratedDocument<UserDoc>;

/**
 * Courtesy and academic titles a display name may start with ("Dr Alice Moreau", "Prof. Dr. Lee"):
 * the directory sorts and files the name by what follows them (Alice under A), as a printed staff list
 * does; the title stays in the display name and in the search tokens (decision 215).
 */
const LEADING_TITLE = /^(?:dr|prof|mr|mrs|ms|mx|miss|sir|dame|rev)\.?\s+/u;

/** The folded name without its leading titles; a name that is only a title keeps it. */
export function withoutTitles(folded: string): string {
  let rest = folded;
  for (let m = LEADING_TITLE.exec(rest); m && rest.length > m[0].length; m = LEADING_TITLE.exec(rest))
    rest = rest.slice(m[0].length).trimStart();
  return rest;
}

/**
 * Normalises a name into what the directory stores beside it: the sort key, the alphabet bucket of
 * `contactAlphabets` and the search tokens (of the username too when given). Every write of a name
 * sets all three from here.
 */
export function sortKeys(
  displayName: string,
  username?: string,
): { sortName: string; initial: string; nameTokens: string[] } {
  const sortName = withoutTitles(foldName(displayName).trim());
  const first = sortName.charAt(0).toUpperCase();
  return { sortName, initial: /[A-Z]/.test(first) ? first : '#', nameTokens: nameTokens(displayName, username) };
}
