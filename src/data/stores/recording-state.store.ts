import type { RedisClient } from '../redis.js';
import type { RedisKeys } from '../redis-keys.js';
import { LuaScript } from '../lua-script.js';

export type RecordingState = 'idle' | 'starting' | 'recording' | 'stopping' | 'stopped';

/** Starting is a no-op while a recording is starting or running; otherwise a new session begins. */
const START = new LuaScript(`
local st = redis.call('HGET', KEYS[1], 'state')
if st == 'starting' or st == 'recording' then return {0, tonumber(redis.call('HGET', KEYS[1], 'session'))} end
local n = redis.call('HINCRBY', KEYS[1], 'session', 1)
redis.call('HSET', KEYS[1], 'state', 'starting', 'by:' .. n, ARGV[1])
return {1, n}`);
/** Stopping moves the current session to `stopping`; repeated stops return the same session. */
const STOP = new LuaScript(`
local st = redis.call('HGET', KEYS[1], 'state')
local n = tonumber(redis.call('HGET', KEYS[1], 'session') or '0')
if st == 'starting' or st == 'recording' then redis.call('HSET', KEYS[1], 'state', 'stopping'); return {1, n} end
if st == 'stopping' then return {0, n} end
return {-1, n}`);
/** Advances the state only if the session is still the current one and in the expected state. */
const ADVANCE = new LuaScript(`
if redis.call('HGET', KEYS[1], 'session') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == ARGV[2] then
  redis.call('HSET', KEYS[1], 'state', ARGV[3]) return 1 end
return 0`);

/**
 * An event's recording state as stored: one Redis hash per event (redis-keys `recording`) with the
 * current session number (`session`), its state (`state`), and per session `n` who asked (`by:<n>`) and
 * the video conferencing system's recording id (`rec:<n>`). Changes of state are scripts, so concurrent
 * requests and job retries see one order. When to start, stop and advance is src/core/meetings/recording.service.ts's.
 */
export class RecordingStateStore {
  constructor(private readonly deps: { redis: RedisClient; keys: Pick<RedisKeys, 'recording'> }) {}

  /** Begins a new session asked for by `userId` (fresh), or returns the session already starting or running. */
  async start(tenant: string, eventId: string, userId: string): Promise<{ fresh: boolean; session: number }> {
    const [fresh, session] = (await START.eval(this.deps.redis, 1, this.key(tenant, eventId), userId)) as [
      number,
      number,
    ];
    return { fresh: fresh === 1, session };
  }

  /**
   * Moves the current session to `stopping`: `stopping` when this call did, `already` when it was
   * stopping, `idle` when nothing was starting or running (the last session's number either way).
   */
  async stop(tenant: string, eventId: string): Promise<{ outcome: 'stopping' | 'already' | 'idle'; session: number }> {
    const [code, session] = (await STOP.eval(this.deps.redis, 1, this.key(tenant, eventId))) as [number, number];
    return { outcome: code === 1 ? 'stopping' : code === 0 ? 'already' : 'idle', session };
  }

  /** The current session and its state (`idle`, session 0, when never recorded). */
  async status(tenant: string, eventId: string): Promise<{ state: RecordingState; session: number }> {
    const h = await this.deps.redis.hmget(this.key(tenant, eventId), 'state', 'session');
    return { state: (h[0] as RecordingState | null) ?? 'idle', session: Number(h[1] ?? 0) };
  }

  /** Moves `session` from state `from` to `to` if it is still the current session and in `from`. */
  async advance(
    tenant: string,
    eventId: string,
    session: number,
    from: RecordingState,
    to: RecordingState,
  ): Promise<boolean> {
    return (await ADVANCE.eval(this.deps.redis, 1, this.key(tenant, eventId), String(session), from, to)) === 1;
  }

  /** The recording id of `session`, once its start job stored one. */
  recordingId(tenant: string, eventId: string, session: number): Promise<string | null> {
    return this.deps.redis.hget(this.key(tenant, eventId), `rec:${session}`);
  }

  /** Stores the recording id of `session` unless one is stored (HSETNX); false when another run was first. */
  async claimRecordingId(tenant: string, eventId: string, session: number, recordingId: string): Promise<boolean> {
    return (await this.deps.redis.hsetnx(this.key(tenant, eventId), `rec:${session}`, recordingId)) === 1;
  }

  /** Who asked for `session` (its recording is theirs). */
  requestedBy(tenant: string, eventId: string, session: number): Promise<string | null> {
    return this.deps.redis.hget(this.key(tenant, eventId), `by:${session}`);
  }

  private key(tenant: string, eventId: string): string {
    return this.deps.keys.recording(tenant, eventId);
  }
}
