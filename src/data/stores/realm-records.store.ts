import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { RedisClient } from '../redis.js';
import type { IdpRecordKeys, RedisKeys } from '../redis-keys.js';

/** Models whose records are grouped by grant, so revoking a grant removes all of them. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
]);

/** What the service reads of a stored realm session to end it. */
export interface StoredRealmSession {
  uid?: string;
  accountId?: string;
  authorizations?: Record<string, { sid?: string; grantId?: string }>;
}

/**
 * The embedded identity provider's records in Redis (decision 975): oidc-provider's storage of each
 * realm (interactions, codes, sessions, grants and tokens, expiring by TTL), so any node can continue a
 * sign-in another node started, and the reads and deletes with which any node ends a realm session
 * (src/auth/realm-sessions.ts decides which).
 */
export class RealmRecordsStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'idpRecords'> }) {}

  /** oidc-provider's `adapter` setting for the tenant's realm: one adapter per model. */
  adapterFactory(tenant: string): (model: string) => Adapter {
    const keys = this.deps.keys.idpRecords(tenant);
    return (model: string) => new RedisAdapter(this.deps.redis, keys, model);
  }

  /** The id of the session whose tokens carry `sid` (the session's uid or a per-client sid). */
  sessionIdBySid(tenant: string, sid: string): Promise<string | null> {
    return this.deps.redis.get(this.deps.keys.idpRecords(tenant).sid(sid));
  }

  /** The ids of the sessions of an account (by the subject its tokens carry). */
  sessionIdsOfAccount(tenant: string, accountId: string): Promise<string[]> {
    return this.deps.redis.smembers(this.deps.keys.idpRecords(tenant).account(accountId));
  }

  async session(tenant: string, id: string): Promise<StoredRealmSession | null> {
    const raw = await this.deps.redis.get(this.deps.keys.idpRecords(tenant).record('Session', id));
    return raw ? (JSON.parse(raw) as StoredRealmSession) : null;
  }

  /**
   * Deletes a session as read by `session()` in one transaction: its record and `sid` lookups, and each
   * of its grants with every record minted under the grant; it leaves the account's session index.
   */
  async deleteSession(tenant: string, id: string, session: StoredRealmSession): Promise<void> {
    const keys = this.deps.keys.idpRecords(tenant);
    const doomed = [keys.record('Session', id), ...(session.uid ? [keys.sid(session.uid)] : [])];
    for (const a of Object.values(session.authorizations ?? {})) {
      if (a.sid) doomed.push(keys.sid(a.sid));
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
  }
}

/**
 * Sessions are also found by account and by the per-client `sid` their tokens carry, so a sign-out
 * in the service can end the realm session behind it (the session reads above use these indexes).
 */
function indexSession(
  m: ReturnType<RedisClient['multi']>,
  keys: IdpRecordKeys,
  id: string,
  payload: AdapterPayload,
  expiresIn: number,
): void {
  if (payload.accountId) {
    const byAccount = keys.account(payload.accountId);
    m.sadd(byAccount, id).expire(byAccount, expiresIn, 'GT').expire(byAccount, expiresIn, 'NX');
  }
  const authorizations = (payload.authorizations ?? {}) as Record<string, { sid?: string }>;
  const sids = [payload.uid, ...Object.values(authorizations).map((a) => a.sid)].filter(
    (s): s is string => typeof s === 'string',
  );
  for (const sid of sids) m.set(keys.sid(sid), id, 'EX', expiresIn);
}

/** oidc-provider's storage interface for one model of one realm; records expire by TTL. */
class RedisAdapter implements Adapter {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: IdpRecordKeys,
    private readonly name: string,
  ) {}

  private key(id: string): string {
    return this.keys.record(this.name, id);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const key = this.key(id);
    const m = this.redis.multi();
    if (expiresIn) m.set(key, JSON.stringify(payload), 'EX', expiresIn);
    else m.set(key, JSON.stringify(payload));
    if (GRANTABLE.has(this.name) && payload.grantId) {
      const grantKey = this.keys.grant(String(payload.grantId));
      m.rpush(grantKey, key);
      if (expiresIn) m.expire(grantKey, expiresIn, 'GT').expire(grantKey, expiresIn, 'NX');
    }
    if (payload.userCode) m.set(this.keys.userCode(payload.userCode), id, 'EX', expiresIn ?? 600);
    if (payload.uid) m.set(this.keys.uid(payload.uid), id, 'EX', expiresIn ?? 600);
    if (this.name === 'Session') indexSession(m, this.keys, id, payload, expiresIn ?? 600);
    await m.exec();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const raw = await this.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(this.keys.uid(uid));
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(this.keys.userCode(userCode));
    return id ? this.find(id) : undefined;
  }

  /** Marks a record consumed (single-use codes), keeping its remaining TTL. */
  async consume(id: string): Promise<void> {
    const found = await this.find(id);
    if (!found) return;
    await this.redis.set(
      this.key(id),
      JSON.stringify({ ...found, consumed: Math.floor(Date.now() / 1000) }),
      'KEEPTTL',
    );
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const grantKey = this.keys.grant(grantId);
    const keys = await this.redis.lrange(grantKey, 0, -1);
    await this.redis.del(...keys, grantKey);
  }
}
