import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import { ignoreDuplicate } from './duplicate-keys.js';

/** A user's favourite contacts: one document per (user, contact), so marking twice is harmless. */
export class FavouriteRepository {
  constructor(private readonly db: TenantDb) {}

  async set(userId: Types.ObjectId, contactId: Types.ObjectId, favourite: boolean): Promise<void> {
    const F = this.db.models.Favourite;
    // Concurrent upserts of one pair may meet the unique index (FerretDB; MongoDB retries them itself):
    // the pair is then stored, which is what was asked.
    if (favourite)
      await F.updateOne({ userId, contactId }, { $setOnInsert: { userId, contactId } }, { upsert: true })
        .exec()
        .catch(ignoreDuplicate);
    else await F.deleteOne({ userId, contactId }).exec();
  }

  async contactIds(userId: Types.ObjectId): Promise<Types.ObjectId[]> {
    const rows = await this.db.models.Favourite.find({ userId }, { contactId: 1 })
      .lean<{ contactId: Types.ObjectId }[]>()
      .exec();
    return rows.map((r) => r.contactId);
  }

  /** Which of `contactIds` the user marked, in one query. */
  async among(userId: Types.ObjectId, contactIds: readonly Types.ObjectId[]): Promise<Set<string>> {
    if (!contactIds.length) return new Set();
    const rows = await this.db.models.Favourite.find({ userId, contactId: { $in: contactIds } }, { contactId: 1 })
      .lean<{ contactId: Types.ObjectId }[]>()
      .exec();
    return new Set(rows.map((r) => String(r.contactId)));
  }
}
