import type { RedisClient } from '../../data/redis.js';
import { realmSessionKeys } from './redis-adapter.js';

/** Session, grant and refresh-token lifetime of the embedded realm. */
export const EMBEDDED_REALM_SESSION_SECONDS = 8 * 3600;

/** Ends realm (identity-provider) sessions behind a sign-out; each call returns the `sid`s that ended. */
export interface RealmSessionStore {
  /** Ends the realm session whose tokens carry `sid` (its cookie stops signing in, its grants end). */
  endBySid(tenant: string, sid: string): Promise<string[]>;
  /** Ends every realm session of the account with this subject. */
  endAccount(tenant: string, subject: string): Promise<string[]>;
}

interface StoredSession {
  uid?: string;
  accountId?: string;
  authorizations?: Record<string, { sid?: string; grantId?: string }>;
}

/**
 * The embedded provider's sessions, ended directly in its Redis storage (redis-adapter.ts), so any
 * node can sign a user out of the realm whether or not it serves the realm itself. Deleting the
 * session record makes the realm's session cookie worthless (the next authorization asks for the
 * password again); deleting the grant and its tokens ends the refresh tokens minted under it.
 */
export class EmbeddedRealmSessions implements RealmSessionStore {
  constructor(private readonly deps: { redis: RedisClient; storePrefix(tenant: string): string }) {}

  async endBySid(tenant: string, sid: string): Promise<string[]> {
    const keys = realmSessionKeys(this.deps.storePrefix(tenant));
    const id = await this.deps.redis.get(keys.sid(sid));
    return id ? this.endSession(tenant, id) : [];
  }

  async endAccount(tenant: string, subject: string): Promise<string[]> {
    const ids = await this.deps.redis.smembers(realmSessionKeys(this.deps.storePrefix(tenant)).account(subject));
    const sids: string[] = [];
    for (const id of ids) sids.push(...(await this.endSession(tenant, id)));
    return sids;
  }

  private async endSession(tenant: string, id: string): Promise<string[]> {
    const keys = realmSessionKeys(this.deps.storePrefix(tenant));
    const raw = await this.deps.redis.get(keys.record('Session', id));
    if (!raw) return [];
    const session = JSON.parse(raw) as StoredSession;
    const sids: string[] = session.uid ? [session.uid] : [];
    const doomed = [keys.record('Session', id), ...sids.map((s) => keys.sid(s))];
    for (const a of Object.values(session.authorizations ?? {})) {
      if (a.sid) (sids.push(a.sid), doomed.push(keys.sid(a.sid)));
      if (a.grantId)
        doomed.push(
          ...(await this.deps.redis.lrange(keys.grant(a.grantId), 0, -1)),
          keys.grant(a.grantId),
          keys.record('Grant', a.grantId),
        );
    }
    const m = this.deps.redis.multi().del(...doomed);
    if (session.accountId) m.srem(keys.account(session.accountId), id);
    await m.exec();
    return sids;
  }
}
