import type { TenantDb } from '../mongo.js';

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

  /** Which of these usernames already belong to users of the tenant (they cannot be pending). */
  async existingUsers(usernames: readonly string[]): Promise<Set<string>> {
    if (!usernames.length) return new Set();
    const users = await this.db.models.User.find({ username: { $in: usernames } }, { username: 1 }).lean();
    return new Set(users.map((u) => u.username));
  }

  /**
   * Upserts a batch by username. New usernames go in with one insertMany (an upsert per row costs a
   * collection scan on some MongoDB-wire servers); known ones, and any a concurrent import inserted
   * first (duplicate key), are updated. A re-run of the same import rewrites the same documents.
   */
  async upsertMany(rows: readonly PendingUserRow[], importId: string): Promise<number> {
    if (!rows.length) return 0;
    const M = this.db.models.PendingUser;
    const known = new Set((await M.find({ username: { $in: rows.map((r) => r.username) } }, { username: 1 }).lean()).map((d) => d.username));
    const fresh = rows.filter((r) => !known.has(r.username));
    const retry = new Set<string>();
    if (fresh.length) {
      try {
        await M.insertMany(fresh.map((r) => ({ ...fields(r, importId), status: 'pending' })), { ordered: false });
      } catch (e) {
        const failed = duplicateIndexes(e);
        if (!failed) throw e;
        for (const i of failed) retry.add(fresh[i]!.username);
      }
    }
    const updates = rows.filter((r) => known.has(r.username) || retry.has(r.username));
    if (updates.length) {
      await M.bulkWrite(
        updates.map((r) => ({ updateOne: { filter: { username: r.username }, update: { $set: fields(r, importId), $setOnInsert: { status: 'pending' } }, upsert: true } })),
        { ordered: false },
      );
    }
    return rows.length;
  }

  findByUsername(username: string) {
    return this.db.models.PendingUser.findOne({ username: username.toLowerCase() }).lean();
  }

  countForImport(importId: string): Promise<number> {
    return this.db.models.PendingUser.countDocuments({ importId });
  }
}

function fields(r: PendingUserRow, importId: string) {
  return { username: r.username, displayName: r.displayName, role: r.role, importId, rowNumber: r.rowNumber, ...(r.email ? { email: r.email } : {}) };
}

/** Indexes of an unordered insertMany that failed only on duplicate keys; undefined for any other failure. */
function duplicateIndexes(e: unknown): number[] | undefined {
  const err = e as { code?: number; writeErrors?: { index: number; code?: number; err?: { code?: number } }[] };
  const list = err.writeErrors ?? [];
  if (!list.length) return err.code === 11000 ? [] : undefined;
  const codes = list.map((w) => w.code ?? w.err?.code);
  return codes.every((c) => c === 11000) ? list.map((w) => w.index) : undefined;
}
