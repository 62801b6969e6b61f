import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

export interface AccountSetupRecord {
  _id: string;
  kind: 'password' | 'binding';
  userId: Types.ObjectId;
  purpose: 'first-admin' | 'activation';
  email?: string | null;
  username?: string | null;
  expiresAt: Date;
  usedAt?: Date | null;
  supersededAt?: Date | null;
}

/** Set-password links (stored by token hash) and pending identity-provider bindings of one tenant. */
export class AccountSetupRepository {
  constructor(private readonly db: TenantDb) {}

  /** Issues a record; earlier open records of the same kind for the user are superseded (only the newest link works). */
  async issue(r: {
    id: string;
    kind: AccountSetupRecord['kind'];
    userId: string;
    purpose: AccountSetupRecord['purpose'];
    email?: string;
    username?: string;
    expiresAt: Date;
    createdBy?: string;
  }): Promise<void> {
    const userId = new Types.ObjectId(r.userId);
    await this.db.models.AccountSetup.updateMany(
      { userId, kind: r.kind, usedAt: null, supersededAt: null },
      { $set: { supersededAt: new Date() } },
    );
    await this.db.models.AccountSetup.create({
      _id: r.id,
      kind: r.kind,
      userId,
      purpose: r.purpose,
      email: r.email,
      username: r.username,
      expiresAt: r.expiresAt,
      createdBy: r.createdBy,
    });
  }

  /** An open (unused, not superseded, unexpired) record by id. */
  findOpen(id: string, now = new Date()): Promise<AccountSetupRecord | null> {
    return this.db.models.AccountSetup.findOne({ _id: id, usedAt: null, supersededAt: null, expiresAt: { $gt: now } })
      .lean<AccountSetupRecord>()
      .exec();
  }

  /** Marks an open record used; exactly one caller wins (compare-and-set on `usedAt`). */
  use(id: string, now = new Date()): Promise<AccountSetupRecord | null> {
    return this.db.models.AccountSetup.findOneAndUpdate(
      { _id: id, usedAt: null, supersededAt: null, expiresAt: { $gt: now } },
      { $set: { usedAt: now } },
      { new: true },
    )
      .lean<AccountSetupRecord>()
      .exec();
  }

  /** Open bindings waiting for a first sign-in with this verified email or this username. */
  openBindings(match: { email?: string; username?: string }, now = new Date()): Promise<AccountSetupRecord[]> {
    const or: Record<string, string>[] = [];
    if (match.email) or.push({ email: match.email.toLowerCase() });
    if (match.username) or.push({ username: match.username.toLowerCase() });
    if (!or.length) return Promise.resolve([]);
    return this.db.models.AccountSetup.find({
      kind: 'binding',
      usedAt: null,
      supersededAt: null,
      expiresAt: { $gt: now },
      $or: or,
    })
      .limit(2)
      .lean<AccountSetupRecord[]>()
      .exec();
  }

  /** Open records of one user (to tell an admin whether a link is outstanding). */
  openFor(userId: string, now = new Date()): Promise<AccountSetupRecord[]> {
    return this.db.models.AccountSetup.find({
      userId: new Types.ObjectId(userId),
      usedAt: null,
      supersededAt: null,
      expiresAt: { $gt: now },
    })
      .lean<AccountSetupRecord[]>()
      .exec();
  }
}
