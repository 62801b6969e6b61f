import { isValidObjectId } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import { claimedUpdate } from './transition-claim.js';

export interface OfflineTokenRecord {
  _id: { toString(): string };
  tokenHash: string;
  userId: unknown;
  purpose: string;
  permissions: string[];
  expiresAt: Date;
  revokedAt?: Date | null;
}

/** Offline tokens, stored by hash only. */
export class OfflineTokenRepository {
  constructor(private readonly db: TenantDb) {}

  async create(t: {
    tokenHash: string;
    userId: string;
    purpose: string;
    permissions: string[];
    expiresAt: Date;
    parentSessionId?: string;
  }): Promise<string> {
    const doc = await this.db.models.OfflineToken.create(t);
    return doc._id.toString();
  }

  findById(id: string): Promise<OfflineTokenRecord | null> {
    if (!isValidObjectId(id)) return Promise.resolve(null);
    return this.db.models.OfflineToken.findById(id).lean<OfflineTokenRecord>().exec();
  }

  /** A live token by hash: not revoked and not expired (checked by time, no TTL index). */
  findLiveByHash(tokenHash: string, now: Date): Promise<OfflineTokenRecord | null> {
    return this.db.models.OfflineToken.findOneAndUpdate(
      { tokenHash, revokedAt: null, expiresAt: { $gt: now } },
      { $set: { lastUsedAt: now } },
      { returnDocument: 'after' },
    )
      .lean<OfflineTokenRecord>()
      .exec();
  }

  /** Revokes a token of `userId`; false when there is no live token of that user with this id. */
  async revoke(id: string, userId: string): Promise<boolean> {
    if (!isValidObjectId(id)) return false;
    // One revoker wins (through a claim on FerretDB, whose guarded updates are not compare-and-set).
    const r = await claimedUpdate(
      this.db,
      this.db.models.OfflineToken,
      `${id}:revoke`,
      { _id: id, userId, revokedAt: null },
      { $set: { revokedAt: new Date() } },
    );
    return r !== null;
  }

  /** Revokes the live tokens issued by any of `sessionIds` (derived sessions); returns their ids. */
  async revokeIssuedBy(sessionIds: string[]): Promise<string[]> {
    const live = await this.db.models.OfflineToken.find({ parentSessionId: { $in: sessionIds }, revokedAt: null })
      .select({ _id: 1 })
      .lean<{ _id: { toString(): string } }[]>()
      .exec();
    if (!live.length) return [];
    await this.db.models.OfflineToken.updateMany(
      { _id: { $in: live.map((t) => t._id) }, revokedAt: null },
      { $set: { revokedAt: new Date() } },
    );
    return live.map((t) => t._id.toString());
  }
}
