import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

/**
 * Appends one push to a recipient's history. The position hash holds the stream's epoch, its last
 * sequence number and the run id of the Redis server that wrote them: a stream written by an earlier run
 * of the server (a restart, even one that reloaded a snapshot older than what clients saw, or a failover
 * to a replica) starts a new epoch, so a client's old position is answered `resync_required` instead of
 * colliding with numbers given again. Entries are trimmed to the count limit and the time window; the
 * stream lives as long as its window, the position hash for the position TTL.
 * A push with an origin (an actor turn's, decision 1133) is recorded once: the hash keeps, per source, its
 * last turn (`o:<source>` = `<epoch>.<turn>|<index>:<seq>,...`). The same push again (a next owner sending
 * an outbox whose first sending it could not know of) answers the position it was given; a push of an
 * older turn of the source answers -1 (recorded before, not recorded again).
 * KEYS: stream, position hash. ARGV: event, payload (JSON), windowMs, maxPushes, positionTtlMs, fresh epoch,
 * source ('' = none), turn epoch, turn number, index in the turn.
 */
const APPEND = new LuaScript(`
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local m = redis.call('HMGET', KEYS[2], 'epoch', 'seq', 'run')
local epoch, seq = m[1], tonumber(m[2] or '0')
if not epoch or m[3] ~= run then
  epoch = ARGV[6]
  seq = 0
  redis.call('DEL', KEYS[1], KEYS[2])
end
local field, kept
if ARGV[7] ~= '' then
  field = 'o:' .. ARGV[7]
  kept = ARGV[8] .. '.' .. ARGV[9] .. '|'
  local cur = redis.call('HGET', KEYS[2], field)
  local ce, cn, list
  if cur then ce, cn, list = string.match(cur, '^(%d+)%.(%d+)|(.*)$') end
  if list then
    local te, tn = tonumber(ARGV[8]), tonumber(ARGV[9])
    ce, cn = tonumber(ce), tonumber(cn)
    if te < ce or (te == ce and tn < cn) then return {epoch, -1} end
    if te == ce and tn == cn then
      local given = string.match(',' .. list .. ',', ',' .. ARGV[10] .. ':(%d+),')
      if given then return {epoch, tonumber(given)} end
      kept = cur .. ','
    end
  end
end
seq = seq + 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[4], '*', 's', seq, 'e', ARGV[1], 'p', ARGV[2])
redis.call('XTRIM', KEYS[1], 'MINID', '=', string.format('%.0f', now - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], 'epoch', epoch, 'seq', seq, 'run', run)
if field then redis.call('HSET', KEYS[2], field, kept .. ARGV[10] .. ':' .. seq) end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {epoch, seq}`);

/**
 * Reads a recipient's history after a position. Without a position (empty epoch): the current position
 * ('current'). With one: 'ok' and every push after it, oldest first, when the history still holds them
 * all within the window; otherwise 'resync' with the current position. A stream of an earlier run of the
 * server gets a new epoch here too. KEYS: stream, position hash.
 * ARGV: epoch, seq, windowMs, positionTtlMs, fresh epoch, peek ('1': answer without the pushes).
 */
const READ = new LuaScript(`
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local m = redis.call('HMGET', KEYS[2], 'epoch', 'seq', 'run')
local epoch, seq = m[1], tonumber(m[2] or '0')
if not epoch or m[3] ~= run then
  epoch = ARGV[5]
  seq = 0
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[2], 'epoch', epoch, 'seq', 0, 'run', run)
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if ARGV[1] == '' then return {'current', epoch, seq} end
if ARGV[1] ~= epoch then return {'resync', epoch, seq} end
local have = tonumber(ARGV[2])
if have == seq then return {'ok', epoch, seq} end
if have > seq then return {'resync', epoch, seq} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('XTRIM', KEYS[1], 'MINID', '=', string.format('%.0f', now - tonumber(ARGV[3])))
local want = seq - have
local got = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', want)
if #got < want then return {'resync', epoch, seq} end
local out = {'ok', epoch, seq}
if ARGV[6] == '1' then return out end
for i = #got, 1, -1 do
  local f = got[i][2]
  out[#out + 1] = f[2]
  out[#out + 1] = f[4]
  out[#out + 1] = f[6]
end
return out`);

/** Where a recipient's history stands: its epoch (random, made with the stream) and last sequence number. */
export interface StreamPosition {
  epoch: string;
  seq: number;
}

/**
 * Where a push comes from, so sending it again records it once (decision 1133): an actor turn's push is
 * its actor (`source`), the turn (the shard's `epoch` and the turn's number under it, both growing) and its
 * place among the turn's pushes (`index`).
 */
export interface PushOrigin {
  source: string;
  epoch: number;
  turn: number;
  index: number;
}

/** One stored push: its sequence number, name and payload (JSON text). */
export interface StoredPush {
  seq: number;
  event: string;
  payload: string;
}

export type HistoryRead =
  | { kind: 'current'; position: StreamPosition }
  | { kind: 'ok'; position: StreamPosition; pushes: StoredPush[] }
  | { kind: 'resync'; position: StreamPosition };

export interface PushHistoryLimits {
  /** How long a push stays recoverable. */
  windowMs: number;
  /** How many pushes a recipient's history holds at most. */
  maxPushes: number;
  /** How long a stream's epoch and last number outlive its last push or read (and a meeting's roster its last change). */
  positionTtlMs: number;
}

/**
 * Per-recipient push histories (Redis streams, one per user or device, redis-keys `pushStream`) and the
 * rosters of meeting rooms (redis-keys `pushRoster`: the recipients logically in the room, whether or not
 * their sockets are connected right now). Each stream and its position hash share one hash tag, so a
 * script touches one cluster slot. What is recorded and for whom is src/realtime/push-history.ts's.
 */
export class PushHistoryStore {
  constructor(
    private readonly deps: {
      redis: RedisClient;
      keys: Pick<RedisKeys, 'pushStream' | 'pushPosition' | 'pushRoster'>;
      limits: PushHistoryLimits;
      /** A new epoch (random; tests may pin it). */
      epoch: () => string;
    },
  ) {}

  get limits(): PushHistoryLimits {
    return this.deps.limits;
  }

  /**
   * Appends one push and returns the recipient's position for it: with an origin already recorded, the
   * position it was given; undefined for a push of an older turn of its origin (recorded before).
   */
  async append(
    tenant: string,
    stream: string,
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<StreamPosition | undefined> {
    const { redis, keys, limits } = this.deps;
    const [epoch, seq] = (await APPEND.eval(
      redis,
      2,
      keys.pushStream(tenant, stream),
      keys.pushPosition(tenant, stream),
      event,
      payload,
      limits.windowMs,
      limits.maxPushes,
      limits.positionTtlMs,
      this.deps.epoch(),
      origin?.source ?? '',
      origin?.epoch ?? 0,
      origin?.turn ?? 0,
      origin?.index ?? 0,
    )) as [string, number];
    return Number(seq) < 0 ? undefined : { epoch, seq: Number(seq) };
  }

  /** The pushes after `from` (or the current position without one); `peek` answers without the pushes. */
  async read(tenant: string, stream: string, from?: StreamPosition, peek = false): Promise<HistoryRead> {
    const { redis, keys, limits } = this.deps;
    const r = (await READ.eval(
      redis,
      2,
      keys.pushStream(tenant, stream),
      keys.pushPosition(tenant, stream),
      from?.epoch ?? '',
      from?.seq ?? 0,
      limits.windowMs,
      limits.positionTtlMs,
      this.deps.epoch(),
      peek ? '1' : '0',
    )) as [string, string, number, ...string[]];
    const [kind, epoch, seq, ...rest] = r;
    const position = { epoch, seq: Number(seq) };
    if (kind === 'current') return { kind, position };
    if (kind === 'resync') return { kind, position };
    const pushes: StoredPush[] = [];
    for (let i = 0; i + 2 < rest.length; i += 3)
      pushes.push({ seq: Number(rest[i]), event: rest[i + 1]!, payload: rest[i + 2]! });
    return { kind: 'ok', position, pushes };
  }

  /** The recipients (streams) logically in a room. */
  roster(room: string): Promise<string[]> {
    return this.deps.redis.smembers(this.deps.keys.pushRoster(room));
  }

  async enroll(room: string, streams: string[]): Promise<void> {
    if (!streams.length) return;
    const key = this.deps.keys.pushRoster(room);
    await this.deps.redis.sadd(key, ...streams);
    await this.deps.redis.pexpire(key, this.deps.limits.positionTtlMs);
  }

  async unenroll(room: string, streams: string[]): Promise<void> {
    if (streams.length) await this.deps.redis.srem(this.deps.keys.pushRoster(room), ...streams);
  }

  async dropRoster(room: string): Promise<void> {
    await this.deps.redis.del(this.deps.keys.pushRoster(room));
  }
}
