import { z } from 'zod';
import type { GroupRecord } from '../../data/models/group.model.js';
import { IsoDate, iso } from './common.presenter.js';

/** GroupInfo: a contact group with its participant ids (contacts come from /group/users/{groupId}). */
export const GroupInfo = z.object({
  id: z.string(),
  name: z.string(),
  ownerId: z.string(),
  participantIds: z.array(z.string()),
  participantCount: z.number().int(),
  createdAt: IsoDate.nullable(),
});
export type GroupInfo = z.infer<typeof GroupInfo>;

export function presentGroup(g: GroupRecord): GroupInfo {
  const ids = g.participantIds.map(String);
  return {
    id: String(g._id),
    name: g.name,
    ownerId: String(g.ownerId),
    participantIds: ids,
    participantCount: ids.length,
    createdAt: iso(g.createdAt),
  };
}
