import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import type { CareTeamWrites } from '../care-team-writes.js';
import { LuaScript } from '../lua-script.js';

/** How long a write's mark holds when its writer never clears it (died, or lost Redis after its write). */
export const CARE_TEAM_WRITE_HOLD_MS = 60_000;
/** How often a process owed a generation change (a write made while Redis was away) tries to set it. */
const OWED_RETRY_MS = 1_000;
/** The generation outlives every entry it validates (entries live at most a day, env-schema.ts). */
const GENERATION_TTL_MS = 2 * 86_400_000;
/** An ObjectId in hex: entries are the ids end to end, without separators. */
const ID_CHARS = 24;

/**
 * Shared by every script: `now` in milliseconds from the server's clock, and `bump`, which changes the
 * generation. A generation never comes back: a missing one starts from the server's time in
 * microseconds, above every number an earlier one (counted up by one per write) can have reached.
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fresh = t[1] .. string.format('%06d', tonumber(t[2]))
local function bump(gen, ttl)
  if redis.call('EXISTS', gen) == 1 then redis.call('INCR', gen) else redis.call('SET', gen, fresh) end
  redis.call('PEXPIRE', gen, ttl)
end`;

/** A write begins: its token held until its deadline, and a new generation. */
const BEGIN = new LuaScript(`${PRELUDE}
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
bump(KEYS[1], ARGV[3])
return 1`);

/** A write ended: its token dropped, and a new generation (readers of the one before missed the write). */
const END = new LuaScript(`${PRELUDE}
redis.call('ZREM', KEYS[2], ARGV[1])
bump(KEYS[1], ARGV[2])
return 1`);

/** The generation (started when missing), how many writes are under way, and the user's entry. */
const RECALL = new LuaScript(`${PRELUDE}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local gen = redis.call('GET', KEYS[1])
if not gen then
  gen = fresh
  redis.call('SET', KEYS[1], gen, 'PX', ARGV[1])
end
return { gen, redis.call('ZCARD', KEYS[2]), redis.call('GET', KEYS[3]) or '' }`);

/** Stores an entry only while the generation it was asked under holds and no write is under way. */
const KEEP = new LuaScript(`${PRELUDE}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') > 0 then return 0 end
redis.call('SET', KEYS[3], ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/** Leave to store a care team computed after a miss: the generation the miss was seen under. */
export interface CareTeamTicket {
  tenant: string;
  userId: string;
  generation: string;
}

/** A cached care team (`ids`), or a miss with a ticket when its answer may be kept (none while a write is under way). */
export interface CareTeamRecall {
  ids?: string[];
  ticket?: CareTeamTicket;
}

type Keys = Pick<RedisKeys, 'careTeamGeneration' | 'careTeamWrites' | 'careTeam'>;

/**
 * The care-team cache in Redis (decision 1132), per tenant: a generation that every write which can change
 * a care team changes before and after it, the writes under way, and per patient the ids of their care
 * team with the generation they were read under (`<generation>|<id><id>...`, ids in hex). An entry is
 * served only under its own generation, so any write of the tenant after it was read retires it. All
 * keys of a tenant share its hash tag (one cluster slot per script).
 */
export class CareTeamStore implements CareTeamWrites {
  /** Tenants whose care-team writes went through without their marks: a generation change is owed. */
  private readonly owed = new Set<string>();
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      redis: RedisClient;
      keys: Keys;
      /** How long an entry lives (its bound on memory); the writes' side does not use it. */
      ttlSeconds: number;
    },
  ) {}

  async begin(tenant: string): Promise<string> {
    const token = randomUUID();
    const { redis, keys } = this.deps;
    const gen = keys.careTeamGeneration(tenant);
    await BEGIN.eval(redis, 2, gen, keys.careTeamWrites(tenant), token, CARE_TEAM_WRITE_HOLD_MS, GENERATION_TTL_MS);
    return token;
  }

  async end(tenant: string, token: string): Promise<void> {
    const { redis, keys } = this.deps;
    const gen = keys.careTeamGeneration(tenant);
    await END.eval(redis, 2, gen, keys.careTeamWrites(tenant), token, GENERATION_TTL_MS);
  }

  /** A write went through without its marks: the tenant's generation changes once Redis answers. */
  owe(tenant: string): void {
    this.owed.add(tenant);
    if (this.retry) return;
    this.retry = setInterval(() => void this.settle(), OWED_RETRY_MS);
    // Never what keeps a process alive: a stopping process has no care team to serve.
    this.retry.unref();
  }

  /** Changes the generation of every tenant owed one; true once none is owed. */
  async settle(): Promise<boolean> {
    for (const tenant of [...this.owed]) {
      try {
        await this.end(tenant, randomUUID());
        this.owed.delete(tenant);
      } catch {
        // Redis still away: tried again at the next interval.
      }
    }
    if (!this.owed.size && this.retry) {
      clearInterval(this.retry);
      this.retry = undefined;
    }
    return this.owed.size === 0;
  }

  /**
   * The user's care team when cached under the tenant's current generation. A tenant owed a generation
   * change gets it first; while it cannot be set, the ask fails (the caller queries the database).
   */
  async recall(tenant: string, userId: string): Promise<CareTeamRecall> {
    if (this.owed.has(tenant) && !(await this.settle()) && this.owed.has(tenant))
      throw new Error('a care-team write made while Redis was away is not yet marked');
    const [generation, busy, entry] = (await RECALL.eval(
      this.deps.redis,
      3,
      ...this.keysOf(tenant, userId),
      GENERATION_TTL_MS,
    )) as [string, number, string];
    const bar = entry.indexOf('|');
    if (bar > 0 && entry.slice(0, bar) === generation) return { ids: splitIds(entry.slice(bar + 1)) };
    return busy === 0 ? { ticket: { tenant, userId, generation } } : {};
  }

  /** Keeps `ids` as the care team of the ticket's user; false when a write came in between. */
  async remember(ticket: CareTeamTicket, ids: readonly string[]): Promise<boolean> {
    const kept = await KEEP.eval(
      this.deps.redis,
      3,
      ...this.keysOf(ticket.tenant, ticket.userId),
      ticket.generation,
      ids.join(''),
      this.deps.ttlSeconds * 1000,
      GENERATION_TTL_MS,
    );
    return kept === 1;
  }

  private keysOf(tenant: string, userId: string): [string, string, string] {
    const { keys } = this.deps;
    return [keys.careTeamGeneration(tenant), keys.careTeamWrites(tenant), keys.careTeam(tenant, userId)];
  }
}

function splitIds(joined: string): string[] {
  const ids: string[] = [];
  for (let i = 0; i + ID_CHARS <= joined.length; i += ID_CHARS) ids.push(joined.slice(i, i + ID_CHARS));
  return ids;
}
