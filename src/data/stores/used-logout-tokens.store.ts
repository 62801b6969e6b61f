import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';

/**
 * The `jti`s of back-channel logout tokens already received, each kept while a token could still be
 * accepted: the replay protection of src/core/identity/backchannel-logout.ts.
 */
export class UsedLogoutTokensStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'logoutTokenJti'> }) {}

  /** Records the `jti` for `ttlSeconds` (SET NX); false when it was already recorded (a replay). */
  async claim(tenant: string, jti: string, ttlSeconds: number): Promise<boolean> {
    return (
      (await this.deps.redis.set(this.deps.keys.logoutTokenJti(tenant, jti), '1', 'EX', ttlSeconds, 'NX')) === 'OK'
    );
  }

  /** Forgets the `jti` (its logout was not applied, so the identity provider may send it again). */
  async release(tenant: string, jti: string): Promise<void> {
    await this.deps.redis.del(this.deps.keys.logoutTokenJti(tenant, jti));
  }
}
