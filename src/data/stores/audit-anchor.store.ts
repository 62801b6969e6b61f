import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

/** Replaces the anchor only if its digest is still the one the caller read ('' for none): one script. */
const ADVANCE = new LuaScript(`local cur = redis.call('HGET', KEYS[1], 'digest')
if (cur or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'digest', ARGV[2], 'value', ARGV[3])
return 1`);

/** The last checkpoint of a tenant's audit chain, as the service signed it (decision 1020). */
export interface AuditAnchor {
  seq: number;
  hash: string;
  /** SHA-256 of the checkpoint's signed statement. */
  digest: string;
  /** The checkpoint itself, so it can be checked and restored without the database. */
  jws: string;
  kid: string;
  jwk: Record<string, unknown>;
  createdAt: string;
}

/**
 * Where the service keeps, outside the database that holds the trail, the last checkpoint it signed for
 * each tenant (redis-keys `auditAnchor`): someone who rewrites the trail and its checkpoints in the
 * database cannot move it. Advanced by compare-and-set on the digest, so two nodes signing at once
 * cannot fork the checkpoints: one wins, the other signs nothing.
 */
export class AuditAnchorStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'auditAnchor'> }) {}

  async get(tenant: string): Promise<AuditAnchor | undefined> {
    const value = await this.deps.redis.hget(this.deps.keys.auditAnchor(tenant), 'value');
    return value ? (JSON.parse(value) as AuditAnchor) : undefined;
  }

  /** Moves the anchor from the checkpoint whose digest is `was` (undefined: none yet); false when another node moved it first. */
  async advance(tenant: string, was: string | undefined, next: AuditAnchor): Promise<boolean> {
    const r = await ADVANCE.eval(
      this.deps.redis,
      1,
      this.deps.keys.auditAnchor(tenant),
      was ?? '',
      next.digest,
      JSON.stringify(next),
    );
    return r === 1;
  }
}
