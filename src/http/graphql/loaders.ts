import DataLoader from 'dataloader';
import { Types } from 'mongoose';
import type { Services } from '../../app/index.js';
import type { Principal } from '../../kernel/principal.js';
import type { ContactView } from '../../core/directory/contact.service.js';
import { isObjectIdString } from '../../kernel/object-id.js';

/**
 * Per-request batch loaders: every contact a query touches (group owners, participants) is fetched
 * in one MongoDB query and one Redis round trip per tick, whatever the shape of the query.
 */
export function createLoaders(services: Services, principal: Principal | undefined) {
  const contact = new DataLoader<string, ContactView | null>(async (ids) => {
    if (!principal) return ids.map(() => null);
    const valid = ids.filter(isObjectIdString).map((s) => new Types.ObjectId(s));
    const views = await services.contacts.byIds(principal, valid);
    const byId = new Map(views.map((v) => [String(v.user._id), v]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  });
  return { contact };
}

export type Loaders = ReturnType<typeof createLoaders>;
