import type { RedisClient } from '../../data/redis.js';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** Models whose records are grouped by grant, so revoking a grant removes all of them. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
]);

/**
 * oidc-provider storage in Redis, so interactions, codes and sessions of the embedded identity provider
 * survive across nodes (any node can continue a sign-in another node started). Records expire by TTL.
 */
export function redisAdapterFactory(redis: RedisClient, prefix: string): (name: string) => Adapter {
  return (name: string) => new RedisAdapter(redis, prefix, name);
}

/**
 * Sessions are also found by account and by the per-client `sid` their tokens carry, so a sign-out
 * in the service can end the realm session behind it (realm-sessions.ts reads these indexes).
 */
function indexSession(
  m: ReturnType<RedisClient['multi']>,
  prefix: string,
  id: string,
  payload: AdapterPayload,
  expiresIn: number,
): void {
  if (payload.accountId) {
    const byAccount = realmSessionKeys(prefix).account(payload.accountId);
    m.sadd(byAccount, id).expire(byAccount, expiresIn, 'GT').expire(byAccount, expiresIn, 'NX');
  }
  const authorizations = (payload.authorizations ?? {}) as Record<string, { sid?: string }>;
  const sids = [payload.uid, ...Object.values(authorizations).map((a) => a.sid)].filter(
    (s): s is string => typeof s === 'string',
  );
  for (const sid of sids) m.set(realmSessionKeys(prefix).sid(sid), id, 'EX', expiresIn);
}

/** Redis keys of the embedded provider's storage that the service reads to end realm sessions. */
export function realmSessionKeys(prefix: string) {
  return {
    record: (model: string, id: string) => `${prefix}${model}:${id}`,
    grant: (grantId: string) => `${prefix}grant:${grantId}`,
    account: (accountId: string) => `${prefix}account-sessions:${accountId}`,
    sid: (sid: string) => `${prefix}sid:${sid}`,
  };
}

class RedisAdapter implements Adapter {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly name: string,
  ) {}

  private key(id: string): string {
    return realmSessionKeys(this.prefix).record(this.name, id);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const key = this.key(id);
    const m = this.redis.multi();
    if (expiresIn) m.set(key, JSON.stringify(payload), 'EX', expiresIn);
    else m.set(key, JSON.stringify(payload));
    if (GRANTABLE.has(this.name) && payload.grantId) {
      const grantKey = realmSessionKeys(this.prefix).grant(String(payload.grantId));
      m.rpush(grantKey, key);
      if (expiresIn) m.expire(grantKey, expiresIn, 'GT').expire(grantKey, expiresIn, 'NX');
    }
    if (payload.userCode) m.set(`${this.prefix}userCode:${payload.userCode}`, id, 'EX', expiresIn ?? 600);
    if (payload.uid) m.set(`${this.prefix}uid:${payload.uid}`, id, 'EX', expiresIn ?? 600);
    if (this.name === 'Session') indexSession(m, this.prefix, id, payload, expiresIn ?? 600);
    await m.exec();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const raw = await this.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(`${this.prefix}uid:${uid}`);
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(`${this.prefix}userCode:${userCode}`);
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
    const grantKey = realmSessionKeys(this.prefix).grant(grantId);
    const keys = await this.redis.lrange(grantKey, 0, -1);
    await this.redis.del(...keys, grantKey);
  }
}
