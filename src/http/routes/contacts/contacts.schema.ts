import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';

export {
  ContactSearchQuery,
  SetFavouriteCommand,
  UpdateContactCommand,
  CreateGroupCommand,
  RenameGroupCommand,
  GroupMembersCommand,
} from '../../../core/directory/contact.schema.js';

export const GroupIdParams = z.object({ groupId: Id });
export const NoticeIdParams = z.object({ noticeId: Id });
export const FavouriteResult = z.object({ contactId: z.string(), favourite: z.boolean() });
export const NoticeSeenResult = z.object({ noticeId: z.string(), seen: z.literal(true) });
