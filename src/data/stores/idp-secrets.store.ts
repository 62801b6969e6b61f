import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

const RESEAL = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2]) end return -1`,
);
const SWAP = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0`,
);

/**
 * The embedded realms' signing and cookie keys as stored: one sealed value in Redis, shared by every
 * node. Creation, rotation and sealing are src/auth/idp-secrets.ts's; every change here is a
 * compare-and-set, so concurrent nodes never overwrite each other.
 */
export class IdpSecretsStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'idpSecrets'> }) {}

  /** Where the value is, for messages that must name it. */
  get location(): string {
    return `Redis ${this.deps.keys.idpSecrets}`;
  }

  /** The sealed value, or null before the first node created it. */
  get(): Promise<string | null> {
    return this.deps.redis.get(this.deps.keys.idpSecrets);
  }

  /** Stores the first value (SET NX): of nodes creating it at once, the first wins and all read that one. */
  async createIfAbsent(sealed: string): Promise<void> {
    await this.deps.redis.set(this.deps.keys.idpSecrets, sealed, 'NX');
  }

  /** Writes `sealed` (the same secrets sealed again) only if the value is still `was`; true when written. */
  async reseal(was: string, sealed: string): Promise<boolean> {
    return (await RESEAL.eval(this.deps.redis, 1, this.deps.keys.idpSecrets, was, sealed)) === 'OK';
  }

  /** Replaces the value by `next` (other secrets) only if it is still `was`; true when replaced. */
  async swap(was: string, next: string): Promise<boolean> {
    return (await SWAP.eval(this.deps.redis, 1, this.deps.keys.idpSecrets, was, next)) === 1;
  }
}
