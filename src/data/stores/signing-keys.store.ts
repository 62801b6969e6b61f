import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

const RESEAL = new LuaScript(
  `if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end return -1`,
);

/**
 * The internal tokens' signing keys as stored: one Redis hash, field `g<generation>` (daily) or
 * `r<ms>` (rotated by an operator) -> the key sealed by the key vault. Rotation, retention and sealing
 * are src/auth/signing-keys.ts's.
 */
export class SigningKeysStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'signingKeys'> }) {}

  /** Where the keys are, for messages that must name it. */
  get location(): string {
    return `Redis ${this.deps.keys.signingKeys}`;
  }

  /** Every stored key by field. */
  all(): Promise<Record<string, string>> {
    return this.deps.redis.hgetall(this.deps.keys.signingKeys);
  }

  /** Stores a key unless the field exists (HSETNX: concurrent nodes creating one generation agree on the first). */
  async addIfAbsent(field: string, sealed: string): Promise<void> {
    await this.deps.redis.hsetnx(this.deps.keys.signingKeys, field, sealed);
  }

  async put(field: string, sealed: string): Promise<void> {
    await this.deps.redis.hset(this.deps.keys.signingKeys, field, sealed);
  }

  /** Replaces a field's value only if it is still `was` (one script); false when another node changed it. */
  async replace(field: string, was: string, sealed: string): Promise<boolean> {
    return (await RESEAL.eval(this.deps.redis, 1, this.deps.keys.signingKeys, field, was, sealed)) !== -1;
  }

  async remove(fields: readonly string[]): Promise<void> {
    await this.deps.redis.hdel(this.deps.keys.signingKeys, ...fields);
  }
}
