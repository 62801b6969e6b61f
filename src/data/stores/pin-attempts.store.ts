import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import type { SecurityRules } from '../repositories/credential.repository.js';
import { LuaScript } from '../lua-script.js';

/** How long the per-source state and the day's failure count live after the last attempt. */
export const PIN_DAY_SECONDS = 24 * 60 * 60;
/** Storage bound of a hard lock; it ends earlier when the PIN is set or reset. */
export const PIN_HARD_LOCK_SECONDS = 30 * 24 * 60 * 60;

/** The tenant's lockout rules (TenantConfig security rules) the scripts apply. */
export type PinLockout = SecurityRules['lockout'];

export type Reservation =
  | { kind: 'ok'; fails: number; day: number }
  | { kind: 'locked'; retryAfter: number }
  | { kind: 'hard'; retryAfter: number };

export type FailureOutcome =
  | { kind: 'failed' }
  | { kind: 'locked'; retryAfter: number; level: number; first: boolean }
  | { kind: 'hard'; retryAfter: number; first: boolean };

/**
 * Redis's clock in milliseconds (one clock for every node), and when the source's lock ends in it. A
 * lock set before locks were kept in milliseconds (`|until`, whole seconds) still counts until it ends.
 */
const NOW_MS = `(function() local t = redis.call('TIME') return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end)()`;
const LOCKED_UNTIL_MS = `math.max(tonumber(redis.call('HGET', KEYS[1], src .. '|untilMs') or '0'), tonumber(redis.call('HGET', KEYS[1], src .. '|until') or '0') * 1000)`;

/**
 * Reserves one evaluated guess before the PIN is checked, so a concurrent burst cannot have more guesses
 * checked than the rules allow. Refuses without reserving while the source is locked, the source's slots
 * are taken, or the account's day budget is spent.
 */
const RESERVE = new LuaScript(`
local hardTtl = redis.call('TTL', KEYS[3])
if hardTtl ~= -2 then return {'hard', hardTtl} end
local src, max, dayMax = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = ${NOW_MS}
local lockedUntil = ${LOCKED_UNTIL_MS}
if lockedUntil > now then return {'locked', math.ceil((lockedUntil - now) / 1000)} end
local fails = tonumber(redis.call('HGET', KEYS[1], src .. '|fails') or '0')
if fails >= max then return {'locked', 1} end
local day = tonumber(redis.call('GET', KEYS[2]) or '0')
if day >= dayMax then return {'hard', redis.call('TTL', KEYS[2])} end
fails = redis.call('HINCRBY', KEYS[1], src .. '|fails', 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
day = redis.call('INCR', KEYS[2])
if day == 1 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return {'ok', fails, day}`);

/**
 * A reserved guess was wrong. The day's last allowed failure sets the hard lock; the source's last
 * allowed failure locks that source for lockoutSeconds doubled per earlier lock of the day (capped).
 * `first` tells the one caller that set the lock (audit and push happen once).
 */
const FAIL = new LuaScript(`
local src, fails, day = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local max, dayMax, base, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if day >= dayMax then
  local first = redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[8])
  return {'hard', first and 1 or 0, redis.call('TTL', KEYS[3])}
end
if fails < max then return {'failed', 0, 0} end
local now = ${NOW_MS}
local lockedUntil = ${LOCKED_UNTIL_MS}
if lockedUntil > now then return {'locked', 0, math.ceil((lockedUntil - now) / 1000)} end
local level = redis.call('HINCRBY', KEYS[1], src .. '|level', 1)
local seconds = math.min(base * 2 ^ (level - 1), cap)
redis.call('HSET', KEYS[1], src .. '|untilMs', now + seconds * 1000, src .. '|fails', 0)
redis.call('HDEL', KEYS[1], src .. '|until')
redis.call('EXPIRE', KEYS[1], math.max(tonumber(ARGV[9]), seconds))
return {'locked', 1, seconds, level}`);

/** The right PIN: the source starts over; the reserved guess is given back to the day's budget. */
const SUCCEED = new LuaScript(`
redis.call('HDEL', KEYS[1], ARGV[1] .. '|fails', ARGV[1] .. '|level', ARGV[1] .. '|until', ARGV[1] .. '|untilMs')
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 1`);

/**
 * PIN attempts and locks as stored in Redis (shared by every node), per account (by username) and
 * source (client address): see docs/decisions/131. Three keys per account (redis-keys `pinGuard`):
 * `sources`, a hash of per-source fields `<source>|fails`, `<source>|level`, `<source>|untilMs`; `day`, the
 * account's failures of the current day from every source; `hard`, set once the day's budget is spent
 * (every source is refused until the PIN is reset). They share the tenant's hash tag, so each script
 * runs on one cluster slot. Each operation is one script, so concurrent guesses cannot overtake the rules.
 */
export class PinAttemptsStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'pinGuard'> }) {}

  /** Reserves one evaluated guess (RESERVE), or says why not: the source is locked or the account hard-locked. */
  async reserve(tenant: string, username: string, source: string, lockout: PinLockout): Promise<Reservation> {
    const k = this.deps.keys.pinGuard(tenant, username);
    const [kind, a, b] = (await RESERVE.eval(
      this.deps.redis,
      3,
      k.sources,
      k.day,
      k.hard,
      source,
      lockout.maxAttempts,
      lockout.maxFailuresPerDay,
      PIN_DAY_SECONDS,
    )) as [string, number, number?];
    // A lock key without an expiry (TTL -1, written by hand) reports the storage bound.
    if (kind === 'hard') return { kind: 'hard', retryAfter: Number(a) > 0 ? Number(a) : PIN_HARD_LOCK_SECONDS };
    if (kind === 'locked') return { kind: 'locked', retryAfter: Math.max(a, 1) };
    return { kind: 'ok', fails: a, day: b ?? a };
  }

  /** A reserved guess was wrong (FAIL): what it set off, if anything. */
  async fail(
    tenant: string,
    username: string,
    source: string,
    r: { fails: number; day: number },
    lockout: PinLockout,
  ): Promise<FailureOutcome> {
    const k = this.deps.keys.pinGuard(tenant, username);
    const args = [
      source,
      r.fails,
      r.day,
      lockout.maxAttempts,
      lockout.maxFailuresPerDay,
      lockout.lockoutSeconds,
      lockout.maxLockoutSeconds,
      PIN_HARD_LOCK_SECONDS,
      PIN_DAY_SECONDS,
    ];
    const [kind, first, seconds, level] = (await FAIL.eval(this.deps.redis, 3, k.sources, k.day, k.hard, ...args)) as [
      string,
      number,
      number,
      number?,
    ];
    if (kind === 'hard')
      return { kind: 'hard', retryAfter: seconds > 0 ? seconds : PIN_HARD_LOCK_SECONDS, first: first === 1 };
    if (kind === 'locked')
      return { kind: 'locked', retryAfter: Math.max(seconds, 1), level: level ?? 0, first: first === 1 };
    return { kind: 'failed' };
  }

  /** The reserved guess was right (SUCCEED). */
  async succeed(tenant: string, username: string, source: string): Promise<void> {
    const k = this.deps.keys.pinGuard(tenant, username);
    await SUCCEED.eval(this.deps.redis, 3, k.sources, k.day, k.hard, source);
  }

  /** A PIN set or reset: every source, the day's count and the hard lock start over. */
  async clear(tenant: string, username: string): Promise<void> {
    const k = this.deps.keys.pinGuard(tenant, username);
    await this.deps.redis.del(k.sources, k.day, k.hard);
  }
}
