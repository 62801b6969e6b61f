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

  /** Upserts a batch; a re-run of the same import rewrites the same documents. */
  async upsertMany(rows: readonly PendingUserRow[], importId: string): Promise<number> {
    if (!rows.length) return 0;
    await this.db.models.PendingUser.bulkWrite(
      rows.map((r) => ({
        updateOne: {
          filter: { username: r.username },
          update: {
            $set: { displayName: r.displayName, role: r.role, importId, rowNumber: r.rowNumber, ...(r.email ? { email: r.email } : {}) },
            $setOnInsert: { status: 'pending' },
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
    return rows.length;
  }

  findByUsername(username: string) {
    return this.db.models.PendingUser.findOne({ username: username.toLowerCase() }).lean();
  }

  countForImport(importId: string): Promise<number> {
    return this.db.models.PendingUser.countDocuments({ importId });
  }
}
