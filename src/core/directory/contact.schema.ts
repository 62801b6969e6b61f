import { z } from 'zod';
import { Id, Paging } from '../../kernel/paging.js';

const boolish = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/** An alphabet bucket of the contact index: a capital letter, or `#` for everything else. */
export const Alphabet = z
  .string()
  .regex(/^([A-Za-z]|#)$/, 'must be a single letter A-Z or #')
  .transform((s) => s.toUpperCase());

export const ContactSearchQuery = Paging.extend({
  name: z.string().trim().max(100).optional(),
  frequent: boolish.optional(),
  alphabet: Alphabet.optional(),
});
export type ContactSearchQuery = z.infer<typeof ContactSearchQuery>;

export const SetFavouriteCommand = z.object({ contactId: Id, favourite: z.boolean().default(true) });
export type SetFavouriteCommand = z.infer<typeof SetFavouriteCommand>;

/** Fields of POST /api/contacts/update (multipart text fields; the avatar is the `avatar` file part). */
export const UpdateContactCommand = z.object({
  displayName: z.string().trim().min(1).max(200).optional(),
  firstName: z.string().trim().max(100).optional(),
  lastName: z.string().trim().max(100).optional(),
  title: z.string().trim().max(100).optional(),
  department: z.string().trim().max(100).optional(),
  phone: z
    .string()
    .trim()
    .regex(/^[+0-9 ()-]{0,32}$/, 'digits, spaces, + ( ) - only')
    .optional(),
  email: z.email().max(200).optional(),
});
export type UpdateContactCommand = z.infer<typeof UpdateContactCommand>;

export const CreateGroupCommand = z.object({
  name: z.string().trim().min(1).max(100),
  participantIds: z.array(Id).max(500).default([]),
});
export type CreateGroupCommand = z.infer<typeof CreateGroupCommand>;
export const RenameGroupCommand = z.object({ groupId: Id, name: z.string().trim().min(1).max(100) });
export type RenameGroupCommand = z.infer<typeof RenameGroupCommand>;
export const GroupMembersCommand = z.object({ groupId: Id, participantIds: z.array(Id).min(1).max(500) });
export type GroupMembersCommand = z.infer<typeof GroupMembersCommand>;

/** GraphQL myContacts: NAME (alphabetical) or FAVOURITES_FIRST; isCallList ranks by recent calls and meetings. */
export const MyContactsArgs = z.object({
  sortType: z.enum(['NAME', 'FAVOURITES_FIRST']).default('NAME'),
  paging: Paging.default({ skip: 0, take: 20 }),
  alphabet: Alphabet.optional(),
  isCallList: z.boolean().default(false),
});
export type MyContactsArgs = z.infer<typeof MyContactsArgs>;
