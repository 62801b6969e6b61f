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

/** A row not stored because an earlier row of the same import holds its username (`of`: that row's number). */
export interface RepeatedRow {
  rowNumber: number;
  of: number;
}

/** What a batch's write did: rows stored (inserted, or updated over an earlier import's), and the repeats left out. */
export interface StoredRows {
  stored: number;
  repeats: RepeatedRow[];
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
   * Stores a batch of an import's rows by username, the first row of the import holding a username
   * winning (rows come in sheet order; batches one after another). The rows are inserted first with one
   * unordered insertMany straight through the driver (no per-row read: a lookup by username scans the
   * collection on some MongoDB-wire servers, and a fresh import, the common case, has nothing to look
   * up). Only the rows the unique index refused are read back: one an earlier row of the same import
   * holds (another row number) is a repeat and is not written; any other (pending from an earlier
   * import, or inserted first by a concurrent one) is updated by username. A re-run of the same import
   * finds its own rows under their own numbers and rewrites the same documents. So the import keeps no
   * set of the usernames it has seen: the unique index is that set (decision 1180).
   */
  async upsertMany(rows: readonly PendingUserRow[], importId: string): Promise<StoredRows> {
    const repeats: RepeatedRow[] = [];
    if (!rows.length) return { stored: 0, repeats };
    const M = this.db.models.PendingUser;
    const now = new Date();
    const firstAt = new Map<string, number>();
    const unique: PendingUserRow[] = [];
    for (const r of rows) {
      const first = firstAt.get(r.username);
      if (first !== undefined) repeats.push({ rowNumber: r.rowNumber, of: first });
      else {
        firstAt.set(r.username, r.rowNumber);
        unique.push(r);
      }
    }
    // Built property by property (no spreads): a large import makes 100,000 of these.
    const docs = unique.map((r) => {
      const doc: Record<string, unknown> = fields(r, importId);
      doc.status = 'pending';
      doc.createdAt = now;
      doc.updatedAt = now;
      return doc;
    });
    let refused: PendingUserRow[] = [];
    try {
      await M.collection.insertMany(docs, { ordered: false });
    } catch (e) {
      const failed = duplicateIndexes(e);
      if (!failed) throw e;
      refused = failed.map((i) => unique[i]!);
    }
    if (!refused.length) return { stored: unique.length, repeats };
    const holders = new Map<string, { importId?: unknown; rowNumber?: unknown }>();
    for (const h of await M.collection
      .find(
        { username: { $in: refused.map((r) => r.username) } },
        { projection: { _id: 0, username: 1, importId: 1, rowNumber: 1 } },
      )
      .toArray())
      holders.set(String(h.username), h as { importId?: unknown; rowNumber?: unknown });
    const updates: PendingUserRow[] = [];
    for (const r of refused) {
      const h = holders.get(r.username);
      if (h?.importId === importId && typeof h.rowNumber === 'number' && h.rowNumber !== r.rowNumber)
        repeats.push({ rowNumber: r.rowNumber, of: h.rowNumber });
      else updates.push(r);
    }
    if (updates.length)
      await bulkUpdate(
        this.db.server,
        M.collection,
        updates.map((r) => ({
          updateOne: {
            filter: { username: r.username },
            update: {
              $set: { ...fields(r, importId), updatedAt: now },
              $setOnInsert: { status: 'pending', createdAt: now },
            },
            upsert: true,
          },
        })),
      );
    return { stored: unique.length - refused.length + updates.length, repeats };
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
