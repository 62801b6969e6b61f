import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { Cluster } from 'ioredis';
import { LuaScript } from '../lua-script.js';

/**
 * Appends one push to the histories of one or more recipients. Each recipient's position hash holds its
 * stream's epoch, its last sequence number and the run id of the Redis server that wrote them: a stream
 * written by an earlier run of the server (a restart, even one that reloaded a snapshot older than what
 * clients saw, or a failover to a replica) starts a new epoch, so a client's old position is answered
 * `resync_required` instead of colliding with numbers given again. Entries are trimmed to the count limit
 * and the time window; the stream lives as long as its window, the position hash for the position TTL.
 * A push with an origin (an actor turn's, decision 1133) is recorded once: the hash keeps, per source, its
 * last turn (`o:<source>` = `<epoch>.<turn>|<index>:<seq>,...`). The same push again (a next owner sending
 * an outbox whose first sending it could not know of) answers the position it was given; a push of an
 * older turn of the source answers -1 (recorded before, not recorded again).
 * On a single server one call serves many recipients of a push: the payload is sent once and the server's
 * run id read once (decision 1154); on a cluster each recipient's keys are a slot of their own.
 * KEYS: per recipient, its stream and its position hash. ARGV: event, payload (JSON), windowMs, maxPushes,
 * positionTtlMs, fresh epoch, source ('' = none), turn epoch, turn number, index in the turn.
 * Answers per recipient its epoch and sequence number (-1: recorded before).
 */
const APPEND_FUNCTION = `
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minId = string.format('%.0f', now - tonumber(ARGV[3]))
local function append(stream, pos, out)
  local m = redis.call('HMGET', pos, 'epoch', 'seq', 'run')
  local epoch, seq = m[1], tonumber(m[2] or '0')
  if not epoch or m[3] ~= run then
    epoch = ARGV[6]
    seq = 0
    redis.call('DEL', stream, pos)
  end
  local field, kept
  local given
  if ARGV[7] ~= '' then
    field = 'o:' .. ARGV[7]
    kept = ARGV[8] .. '.' .. ARGV[9] .. '|'
    local cur = redis.call('HGET', pos, field)
    local ce, cn, list
    if cur then ce, cn, list = string.match(cur, '^(%d+)%.(%d+)|(.*)$') end
    if list then
      local te, tn = tonumber(ARGV[8]), tonumber(ARGV[9])
      ce, cn = tonumber(ce), tonumber(cn)
      if te < ce or (te == ce and tn < cn) then given = -1
      elseif te == ce and tn == cn then
        local was = string.match(',' .. list .. ',', ',' .. ARGV[10] .. ':(%d+),')
        if was then given = tonumber(was) else kept = cur .. ',' end
      end
    end
  end
  if given then
    out[#out + 1] = epoch
    out[#out + 1] = given
  else
    seq = seq + 1
    redis.call('XADD', stream, 'MAXLEN', '=', ARGV[4], '*', 's', seq, 'e', ARGV[1], 'p', ARGV[2])
    redis.call('XTRIM', stream, 'MINID', '=', minId)
    redis.call('PEXPIRE', stream, ARGV[3])
    redis.call('HSET', pos, 'epoch', epoch, 'seq', seq, 'run', run)
    if field then redis.call('HSET', pos, field, kept .. ARGV[10] .. ':' .. seq) end
    redis.call('PEXPIRE', pos, ARGV[5])
    out[#out + 1] = epoch
    out[#out + 1] = seq
  end
end
`;

const APPEND = new LuaScript(`${APPEND_FUNCTION}
local out = {}
for k = 1, #KEYS, 2 do append(KEYS[k], KEYS[k + 1], out) end
return out`);

/**
 * APPEND to the recipients a push names and to those on meeting rosters, the rosters read by the same
 * call (a single server only: the roster members' keys are made here from their names, which a cluster
 * would refuse). KEYS: the named recipients' streams and position hashes (pairs), then the rosters.
 * ARGV: APPEND's ten, then how many recipients are named, their names, the stream key's parts before and
 * after a name, the position key's suffix, the most recipients one call carries. Answers 'ok' and per
 * recipient (named first, then each roster's members not met before) its name, epoch and sequence
 * number; or 'many' and the rosters' members (nothing appended) when there are more recipients than one
 * call carries.
 */
const APPEND_ROSTERS = new LuaScript(`${APPEND_FUNCTION}
local named = tonumber(ARGV[11])
local head, tail, suffix = ARGV[12 + named], ARGV[13 + named], ARGV[14 + named]
local names, seen = {}, {}
for i = 1, named do
  names[i] = ARGV[11 + i]
  seen[names[i]] = true
end
local members = {}
for k = 2 * named + 1, #KEYS do
  for _, s in ipairs(redis.call('SMEMBERS', KEYS[k])) do
    if not seen[s] then
      seen[s] = true
      members[#members + 1] = s
    end
  end
end
if named + #members > tonumber(ARGV[15 + named]) then
  local out = {'many'}
  for i = 1, #members do out[#out + 1] = members[i] end
  return out
end
local out = {'ok'}
for i = 1, named do
  out[#out + 1] = names[i]
  append(KEYS[2 * i - 1], KEYS[2 * i], out)
end
for i = 1, #members do
  local stream = head .. members[i] .. tail
  out[#out + 1] = members[i]
  append(stream, stream .. suffix, out)
end
return out`);

/** Recipients one append call carries at most (a meeting's roster beyond it takes several calls). */
const APPEND_BATCH = 64;

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
    return (await this.appendMany(tenant, [stream], event, payload, origin))[0];
  }

  /**
   * Appends one push to several recipients' histories (on a single server in one script call for up to
   * APPEND_BATCH recipients; on a cluster one call per recipient, each its own slot) and answers their positions in the order of `streams`, as `append`
   * would one by one. The calls are issued at once, in order: each recipient's history keeps the pushes
   * in the order they were appended.
   */
  async appendMany(
    tenant: string,
    streams: readonly string[],
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<(StreamPosition | undefined)[]> {
    const { redis, keys } = this.deps;
    const args = this.appendArgs(event, payload, origin);
    // On a cluster each recipient's keys have a slot of their own (their hash tag is the recipient): one
    // call each. On a single server, one call for up to APPEND_BATCH recipients.
    const per = redis instanceof Cluster ? 1 : APPEND_BATCH;
    const calls: number[][] = [];
    for (let i = 0; i < streams.length; i += per)
      calls.push(Array.from({ length: Math.min(per, streams.length - i) }, (_, n) => i + n));
    const out: (StreamPosition | undefined)[] = new Array(streams.length);
    await Promise.all(
      calls.map(async (g) => {
        const k = g.flatMap((i) => [keys.pushStream(tenant, streams[i]!), keys.pushPosition(tenant, streams[i]!)]);
        const r = (await APPEND.run(redis, k, args)) as (string | number)[];
        g.forEach((i, n) => {
          const seq = Number(r[2 * n + 1]);
          out[i] = seq < 0 ? undefined : { epoch: String(r[2 * n]), seq };
        });
      }),
    );
    return out;
  }

  /**
   * Appends one push to the recipients `streams` names and to every recipient on the `rosters` (meeting
   * rooms; each recipient once), answering each recipient with its position, the named first, as
   * appendMany would. On a single server one script call reads the rosters and appends (no round trip
   * for the rosters first, one per push to a meeting); past APPEND_BATCH recipients, and on a cluster
   * (each recipient its own slot), the rosters are read first and appendMany carries the push.
   * Resolves once the appends were issued (on a cluster after the rosters' reads, on a single server at
   * once), to `written`, their answer: pushes issued in turn keep their order in every history.
   */
  async appendWithRosters(
    tenant: string,
    streams: readonly string[],
    rosters: readonly string[],
    event: string,
    payload: string,
    origin?: PushOrigin,
  ): Promise<{ written: Promise<{ stream: string; position: StreamPosition | undefined }[]> }> {
    const { redis, keys } = this.deps;
    const viaAppendMany = (members: string[]) => {
      const names = [...new Set([...streams, ...members])];
      return this.appendMany(tenant, names, event, payload, origin).then((ps) =>
        names.map((stream, i) => ({ stream, position: ps[i] })),
      );
    };
    const written =
      redis instanceof Cluster
        ? viaAppendMany((await Promise.all(rosters.map((r) => this.roster(r)))).flat())
        : Promise.resolve(await this.appendToRosters(tenant, streams, rosters, event, payload, origin, viaAppendMany));
    // Its caller may take it up after other awaits: a failure meanwhile is not an unhandled rejection.
    written.catch(() => undefined);
    return { written };
  }

  /**
   * The single server's appendWithRosters: the script's answer (its appends done), or for more recipients
   * than one call carries, appendMany's with the members it read. Awaited whole by appendWithRosters, so a
   * next push to the same rosters is issued after this one's appends (its roster could be smaller and fit).
   */
  private async appendToRosters(
    tenant: string,
    streams: readonly string[],
    rosters: readonly string[],
    event: string,
    payload: string,
    origin: PushOrigin | undefined,
    viaAppendMany: (members: string[]) => Promise<{ stream: string; position: StreamPosition | undefined }[]>,
  ): Promise<{ stream: string; position: StreamPosition | undefined }[]> {
    const { redis, keys } = this.deps;
    const [head, tail] = keys.pushStream(tenant, '\0').split('\0') as [string, string];
    const streamKey = keys.pushStream(tenant, '\0');
    const suffix = keys.pushPosition(tenant, '\0').slice(streamKey.length);
    const k = [
      ...streams.flatMap((s) => [keys.pushStream(tenant, s), keys.pushPosition(tenant, s)]),
      ...rosters.map((r) => keys.pushRoster(r)),
    ];
    const r = (await APPEND_ROSTERS.run(redis, k, [
      ...this.appendArgs(event, payload, origin),
      streams.length,
      ...streams,
      head,
      tail,
      suffix,
      APPEND_BATCH,
    ])) as (string | number)[];
    if (r[0] === 'many') return viaAppendMany(r.slice(1).map(String));
    const out: { stream: string; position: StreamPosition | undefined }[] = [];
    for (let i = 1; i + 2 < r.length; i += 3) {
      const seq = Number(r[i + 2]);
      out.push({ stream: String(r[i]), position: seq < 0 ? undefined : { epoch: String(r[i + 1]), seq } });
    }
    return out;
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

  /** APPEND's ARGV: the push, the limits, a fresh epoch, the origin. */
  private appendArgs(event: string, payload: string, origin?: PushOrigin): (string | number)[] {
    const { limits } = this.deps;
    return [
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
    ];
  }

  /** The recipients (streams) logically in a room. */
  roster(room: string): Promise<string[]> {
    return this.deps.redis.smembers(this.deps.keys.pushRoster(room));
  }

  async enroll(room: string, streams: string[]): Promise<void> {
    if (!streams.length) return;
    const key = this.deps.keys.pushRoster(room);
    // Issued together: one round trip (auto-pipelined), in this order on the key's connection.
    await Promise.all([
      this.deps.redis.sadd(key, ...streams),
      this.deps.redis.pexpire(key, this.deps.limits.positionTtlMs),
    ]);
  }

  async unenroll(room: string, streams: string[]): Promise<void> {
    if (streams.length) await this.deps.redis.srem(this.deps.keys.pushRoster(room), ...streams);
  }

  async dropRoster(room: string): Promise<void> {
    await this.deps.redis.del(this.deps.keys.pushRoster(room));
  }
}
