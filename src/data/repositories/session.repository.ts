import type { TenantDb } from '../mongo.js';
import { claimedUpdate } from './transition-claim.js';

export type SessionMethod = 'oidc' | 'qr' | 'pin' | 'offline' | 'impersonation' | 'device';

export interface SessionRecord {
  _id: string;
  userId: unknown;
  method: SessionMethod;
  refreshHash: string;
  previousHashes: string[];
  actorUserId?: unknown;
  purpose?: string | null;
  offlineTokenId?: string | null;
  parentSessionId?: string | null;
  /** Absent on root sessions (and on sessions written before caps existed): the role decides alone. */
  permissionCap?: string[] | null;
  idpSid?: string | null;
  parentIdpSid?: string | null;
  expiresAt: Date;
  revokedAt?: Date | null;
  revokeReason?: string | null;
  /** When the refresh token last rotated (or the session started). */
  lastUsedAt?: Date | null;
}

export interface NewSession {
  _id: string;
  userId: string;
  method: SessionMethod;
  refreshHash: string;
  expiresAt: Date;
  actorUserId?: string;
  purpose?: string;
  offlineTokenId?: string;
  parentSessionId?: string;
  permissionCap?: string[];
  idpSid?: string;
  parentIdpSid?: string;
  ip?: string;
  userAgent?: string;
}

/** Which live sessions to revoke; the given criteria all apply. */
export interface SessionRevokeFilter {
  ids?: string[];
  userId?: string;
  offlineTokenId?: string;
  offlineTokenIds?: string[];
  parentSessionIds?: string[];
  /** Sessions opened from this realm session. */
  idpSid?: string;
  /** Sessions derived from this realm session (QR approved with an identity-provider token). */
  parentIdpSid?: string;
}

/** Server-side sessions; a refresh token names its session and proves it by the current hash. */
export class SessionRepository {
  constructor(private readonly db: TenantDb) {}

  async create(s: NewSession): Promise<void> {
    await this.db.models.Session.create({ ...s, previousHashes: [], lastUsedAt: new Date() });
  }

  findById(id: string): Promise<SessionRecord | null> {
    return this.db.models.Session.findById(id).lean<SessionRecord>().exec();
  }

  /**
   * Swaps the refresh hash only if `oldHash` is still current and the session is live: the
   * conditional update makes a refresh token single use even under concurrent presentation.
   */
  rotate(
    id: string,
    oldHash: string,
    newHash: string,
    now: Date,
    only: { after?: Date } = {},
  ): Promise<SessionRecord | null> {
    // A claim on (session, old hash) keeps the refresh single use on FerretDB too (transition-claim.ts).
    return claimedUpdate<SessionRecord>(
      this.db,
      this.db.models.Session,
      `${id}:${oldHash}`,
      {
        _id: id,
        refreshHash: oldHash,
        revokedAt: null,
        expiresAt: { $gt: now },
        // Only if the last rotation was this recent (the grace of a lost answer, decision 1103).
        ...(only.after ? { lastUsedAt: { $gte: only.after } } : {}),
      },
      { $set: { refreshHash: newHash, lastUsedAt: now }, $push: { previousHashes: oldHash } },
    );
  }

  /** Ids of a user's live sessions, oldest first (for the per-user session cap). */
  async liveIdsForUser(userId: string, now: Date): Promise<string[]> {
    const rows = await this.db.models.Session.find({ userId, revokedAt: null, expiresAt: { $gt: now } })
      .sort({ createdAt: 1 })
      .select({ _id: 1 })
      .lean<{ _id: string }[]>()
      .exec();
    return rows.map((r) => r._id);
  }

  /** Marks live sessions revoked; returns the ids that were live (so each is announced once). */
  async revoke(filter: SessionRevokeFilter, reason: string): Promise<SessionRecord[]> {
    const q: Record<string, unknown> = { revokedAt: null };
    if (filter.ids) q._id = { $in: filter.ids };
    if (filter.userId) q.userId = filter.userId;
    if (filter.offlineTokenId) q.offlineTokenId = filter.offlineTokenId;
    if (filter.offlineTokenIds) q.offlineTokenId = { $in: filter.offlineTokenIds };
    if (filter.parentSessionIds) q.parentSessionId = { $in: filter.parentSessionIds };
    if (filter.idpSid) q.idpSid = filter.idpSid;
    if (filter.parentIdpSid) q.parentIdpSid = filter.parentIdpSid;
    const live = await this.db.models.Session.find(q)
      .select({ _id: 1, userId: 1, idpSid: 1 })
      .lean<SessionRecord[]>()
      .exec();
    if (!live.length) return [];
    await this.db.models.Session.updateMany(
      { _id: { $in: live.map((s) => s._id) }, revokedAt: null },
      { $set: { revokedAt: new Date(), revokeReason: reason } },
    );
    return live;
  }
}
