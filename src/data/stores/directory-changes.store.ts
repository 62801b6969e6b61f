import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

/** Adds a change note atomically: the next number, the note under it, the oldest notes trimmed. */
const RECORD = new LuaScript(`
local seq = redis.call('INCR', KEYS[1])
redis.call('ZADD', KEYS[2], seq, seq .. ' ' .. ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[2]) + 1))
return seq`);

/** One change note: its number and the users it names (`all`: a bulk rewrite). */
export interface DirectoryChange {
  seq: number;
  ids: string[] | 'all';
}

/**
 * The contact directory's change log (decision 212) as stored in Redis, per tenant: a sequence number
 * (redis-keys `directoryVersion`) and the recent notes by number (`directoryChanges`, a sorted set of
 * `<seq> <id,id,...>`, or `<seq> *` for every user). A note is added by one script. What a gap or a bulk
 * rewrite means for a node's directory is src/data/search/contact-directory.ts's.
 */
export class DirectoryChangesStore {
  constructor(
    private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'directoryVersion' | 'directoryChanges'> },
  ) {}

  /** Adds a note naming these users (or all), keeping the last `kept` notes; returns its number. */
  async record(tenant: string, ids: readonly string[] | 'all', kept: number): Promise<number> {
    const { keys } = this.deps;
    return (await RECORD.eval(
      this.deps.redis,
      2,
      keys.directoryVersion(tenant),
      keys.directoryChanges(tenant),
      ids === 'all' ? '*' : ids.join(','),
      kept,
    )) as number;
  }

  /** The number of the tenant's last note (0 when none was ever written, or Redis lost them). */
  async version(tenant: string): Promise<number> {
    return Number((await this.deps.redis.get(this.deps.keys.directoryVersion(tenant))) ?? 0);
  }

  /** The notes kept with numbers after `after` up to `upTo`, in order (trimmed ones are missing). */
  async notes(tenant: string, after: number, upTo: number): Promise<DirectoryChange[]> {
    const notes = await this.deps.redis.zrangebyscore(this.deps.keys.directoryChanges(tenant), `(${after}`, upTo);
    return notes.map((n) => {
      const ids = n.slice(n.indexOf(' ') + 1);
      return { seq: Number(n.slice(0, n.indexOf(' '))), ids: ids === '*' ? 'all' : ids.split(',') };
    });
  }
}
