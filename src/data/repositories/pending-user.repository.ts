import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import { escapeRegex } from './user.repository.js';
import { duplicateIndexes } from './duplicate-keys.js';
import { bulkUpdate } from './bulk-updates.js';

export interface PendingUserRow {
  username: string;
  email?: string;
  displayName: string;
  role: string;
  rowNumber: number;
}

/** Pending users of one tenant, upserted by their natural key (username). */
export class PendingUserRepository {
  constructor(private readonly db: TenantDb) {}

  /** Role names rows may name (built-in and tenant-defined). */
  async roleNames(): Promise<Set<string>> {
    const roles = await this.db.models.Role.find({}, { name: 1 }).lean();
    return new Set(roles.map((r) => String((r as { name?: string }).name)));
  }

  /**
   * A check of which usernames already belong to users of the tenant, for an import's batches. A
   * tenant with at most `hold` users has its usernames read once (one query, at most `hold` names held)
   * and every batch checked in memory; a larger one is asked per batch. A lookup per batch beside the
   * previous batch's insert slows the embedded server's inserts by about a tenth (decision 406).
   * Either way a user created while the import runs may be missed, as between two batches' lookups.
   */
  async existingUsersCheck(hold: number): Promise<(usernames: readonly string[]) => Promise<Set<string>>> {
    const User = this.db.models.User;
    if (hold > 0 && (await User.estimatedDocumentCount()) <= hold) {
      const users = await User.find({}, { _id: 0, username: 1 })
        .limit(hold + 1)
        .lean();
      if (users.length <= hold) {
        const all = new Set(users.map((u) => u.username));
        return async (usernames) => new Set(usernames.filter((u) => all.has(u)));
      }
    }
    return (usernames) => this.existingUsers(usernames);
  }

  /** Which of these usernames already belong to users of the tenant (they cannot be pending). */
  async existingUsers(usernames: readonly string[]): Promise<Set<string>> {
    if (!usernames.length) return new Set();
    const users = await this.db.models.User.find({ username: { $in: usernames } }, { username: 1 }).lean();
    return new Set(users.map((u) => u.username));
  }

  /**
   * Upserts a batch by username. The batch is inserted first with one unordered insertMany straight
   * through the driver (no per-row read: a lookup by username scans the collection on some
   * MongoDB-wire servers, and a fresh import, the common case, has nothing to look up); only rows the
   * unique index refused as duplicates (already pending from an earlier import, or inserted first by a
   * concurrent one) are then updated by username. A re-run of the same import rewrites the same documents.
   */
  async upsertMany(rows: readonly PendingUserRow[], importId: string): Promise<number> {
    if (!rows.length) return 0;
    const M = this.db.models.PendingUser;
    const now = new Date();
    // Built property by property (no spreads): a large import makes 100,000 of these.
    const docs = rows.map((r) => {
      const doc: Record<string, unknown> = fields(r, importId);
      doc.status = 'pending';
      doc.createdAt = now;
      doc.updatedAt = now;
      return doc;
    });
    let duplicates: number[] = [];
    try {
      await M.collection.insertMany(docs, { ordered: false });
    } catch (e) {
      const failed = duplicateIndexes(e);
      if (!failed) throw e;
      duplicates = failed;
    }
    if (duplicates.length) {
      await bulkUpdate(
        this.db.server,
        M.collection,
        duplicates.map((i) => {
          const r = rows[i]!;
          return {
            updateOne: {
              filter: { username: r.username },
              update: {
                $set: { ...fields(r, importId), updatedAt: now },
                $setOnInsert: { status: 'pending', createdAt: now },
              },
              upsert: true,
            },
          };
        }),
      );
    }
    return rows.length;
  }

  findByUsername(username: string) {
    return this.db.models.PendingUser.findOne({ username: username.toLowerCase() }).lean();
  }

  /** A page of pending users: by status and import, a username prefix; sheet order within an import. */
  async list(f: PendingUserFilter, skip: number, take: number) {
    const query = filterOf(f);
    const sort: Record<string, 1> = f.importId ? { rowNumber: 1 } : { username: 1 };
    const M = this.db.models.PendingUser;
    const [items, total] = await Promise.all([
      M.find(query).sort(sort).skip(skip).limit(take).lean(),
      M.countDocuments(query),
    ]);
    return { items, total };
  }

  /** The usernames of an import still pending, in sheet order (a bulk activation's next batch). */
  async nextPending(importId: string, limit: number): Promise<string[]> {
    const rows = await this.db.models.PendingUser.find({ importId, status: 'pending' }, { username: 1 })
      .sort({ rowNumber: 1 })
      .limit(limit)
      .lean();
    return rows.map((r) => r.username);
  }

  countPending(importId: string): Promise<number> {
    return this.db.models.PendingUser.countDocuments({ importId, status: 'pending' });
  }

  /**
   * Claims a pending user for activation (one conditional update, so two admins activating the same
   * user at once make one account and one link): true when this caller moved it from pending.
   */
  async claim(username: string, by: string): Promise<boolean> {
    const r = await this.db.models.PendingUser.updateOne(
      { username, status: 'pending' },
      { $set: { status: 'activated', activatedAt: new Date(), activatedBy: new Types.ObjectId(by) } },
    );
    return r.modifiedCount === 1;
  }

  /** Gives a claim back when the account could not be made (the user stays pending). */
  async release(username: string): Promise<void> {
    await this.db.models.PendingUser.updateOne(
      { username, status: 'activated' },
      { $set: { status: 'pending' }, $unset: { activatedAt: 1, activatedBy: 1, userId: 1 } },
    );
  }

  /** Records the account an activation made or found. */
  async linkUser(username: string, userId: string): Promise<void> {
    await this.db.models.PendingUser.updateOne({ username }, { $set: { userId: new Types.ObjectId(userId) } });
  }

  countForImport(importId: string): Promise<number> {
    return this.db.models.PendingUser.countDocuments({ importId });
  }
}

export interface PendingUserFilter {
  status?: 'pending' | 'activated';
  importId?: string;
  /** A username prefix. */
  q?: string;
}

function filterOf(f: PendingUserFilter): Record<string, unknown> {
  return {
    ...(f.status ? { status: f.status } : {}),
    ...(f.importId ? { importId: f.importId } : {}),
    ...(f.q ? { username: new RegExp(`^${escapeRegex(f.q.toLowerCase())}`) } : {}),
  };
}

/** The stored fields of a row, normalised as the schema would (writes here go through the driver). */
function fields(r: PendingUserRow, importId: string): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    username: r.username,
    displayName: r.displayName,
    role: r.role,
    importId,
    rowNumber: r.rowNumber,
  };
  if (r.email) doc.email = r.email.trim().toLowerCase();
  return doc;
}
