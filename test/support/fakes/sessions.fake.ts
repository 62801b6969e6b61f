import { Types, isValidObjectId } from 'mongoose';
import type {
  NewSession,
  SessionRecord,
  SessionRepository,
  SessionRevokeFilter,
} from '../../../src/data/repositories/session.repository.js';
import type {
  OfflineTokenRecord,
  OfflineTokenRepository,
} from '../../../src/data/repositories/offline-token.repository.js';
import { holds, same, type Doc, type FakeTenantDb } from './memory-db.js';
import type { PublicPart } from './port.js';

const live = (d: Doc) => d.revokedAt === undefined || d.revokedAt === null;

/** Server-side sessions on a fake tenant database (src/data/repositories/session.repository.ts). */
export class FakeSessionRepository implements PublicPart<SessionRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get sessions() {
    return this.db.collection('Session');
  }

  async create(s: NewSession): Promise<void> {
    this.sessions.insert({ ...s, previousHashes: [], lastUsedAt: new Date() });
  }

  async findById(id: string): Promise<SessionRecord | null> {
    const d = this.sessions.byId(id);
    return d ? (this.sessions.read(d) as unknown as SessionRecord) : null;
  }

  /** The same guarded swap as the real one: only while `oldHash` is current and the session is live. */
  async rotate(
    id: string,
    oldHash: string,
    newHash: string,
    now: Date,
    only: { after?: Date } = {},
  ): Promise<SessionRecord | null> {
    const d = this.sessions.byId(id);
    if (!d || d.refreshHash !== oldHash || !live(d) || !((d.expiresAt as Date) > now)) return null;
    if (only.after && !(d.lastUsedAt instanceof Date && d.lastUsedAt >= only.after)) return null;
    const { after } = this.sessions.update(d, (s) => {
      s.refreshHash = newHash;
      s.lastUsedAt = now;
      s.previousHashes = [...((s.previousHashes as string[] | undefined) ?? []), oldHash];
    });
    return this.sessions.read(after) as unknown as SessionRecord;
  }

  async liveIdsForUser(userId: string, now: Date): Promise<string[]> {
    return this.sessions
      .stored((d) => same(d.userId, new Types.ObjectId(userId)) && live(d) && (d.expiresAt as Date) > now)
      .sort((a, b) => (a.createdAt as Date).getTime() - (b.createdAt as Date).getTime())
      .map((d) => String(d._id));
  }

  async revoke(filter: SessionRevokeFilter, reason: string): Promise<SessionRecord[]> {
    const match = (d: Doc) =>
      live(d) &&
      (!filter.ids || filter.ids.includes(String(d._id))) &&
      (!filter.userId || same(d.userId, new Types.ObjectId(filter.userId))) &&
      (!filter.offlineTokenId || d.offlineTokenId === filter.offlineTokenId) &&
      (!filter.offlineTokenIds || holds(filter.offlineTokenIds, d.offlineTokenId)) &&
      (!filter.parentSessionIds || holds(filter.parentSessionIds, d.parentSessionId)) &&
      (!filter.idpSid || d.idpSid === filter.idpSid) &&
      (!filter.parentIdpSid || d.parentIdpSid === filter.parentIdpSid);
    const found = this.sessions.stored(match);
    const answer = found.map(
      (d) => this.sessions.read(d, { _id: 1, userId: 1, idpSid: 1 }) as unknown as SessionRecord,
    );
    const at = new Date();
    for (const d of found)
      this.sessions.update(d, (s) => void Object.assign(s, { revokedAt: at, revokeReason: reason }));
    return answer;
  }
}

/** Offline tokens on a fake tenant database (src/data/repositories/offline-token.repository.ts). */
export class FakeOfflineTokenRepository implements PublicPart<OfflineTokenRepository> {
  constructor(private readonly db: FakeTenantDb) {}

  private get tokens() {
    return this.db.collection('OfflineToken');
  }

  async create(t: Parameters<OfflineTokenRepository['create']>[0]): Promise<string> {
    return String(this.tokens.insert({ ...t })._id);
  }

  async findById(id: string): Promise<OfflineTokenRecord | null> {
    if (!isValidObjectId(id)) return null;
    const d = this.tokens.byId(id);
    return d ? (this.tokens.read(d) as unknown as OfflineTokenRecord) : null;
  }

  async findLiveByHash(tokenHash: string, now: Date): Promise<OfflineTokenRecord | null> {
    const [d] = this.tokens.stored((t) => t.tokenHash === tokenHash && live(t) && (t.expiresAt as Date) > now);
    if (!d) return null;
    return this.tokens.read(
      this.tokens.update(d, (t) => void (t.lastUsedAt = now)).after,
    ) as unknown as OfflineTokenRecord;
  }

  async revoke(id: string, userId: string): Promise<boolean> {
    if (!isValidObjectId(id)) return false;
    const d = this.tokens.byId(id);
    if (!d || !live(d) || !isValidObjectId(userId) || !same(d.userId, new Types.ObjectId(userId))) return false;
    this.tokens.update(d, (t) => void (t.revokedAt = new Date()));
    return true;
  }

  async revokeIssuedBy(sessionIds: string[]): Promise<string[]> {
    const found = this.tokens.stored((t) => live(t) && holds(sessionIds, t.parentSessionId));
    const at = new Date();
    for (const d of found) this.tokens.update(d, (t) => void (t.revokedAt = at));
    return found.map((t) => String(t._id));
  }
}
