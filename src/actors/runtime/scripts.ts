import { LuaScript } from '../../data/lua-script.js';

export { LuaScript };

/**
 * Claims a vacant shard: raise the epoch (the fencing token) and set the lease `node|epoch` with a TTL.
 * The epoch is max(previous + 1, Redis server time in ms), so it keeps growing even if Redis lost its
 * data, and epochs stamped on documents elsewhere stay comparable. A node may re-claim a lease it still
 * holds in Redis (it dropped its shard locally): the epoch still increases, fencing its own older
 * activations. KEYS: lease, epoch. ARGV: node, leaseMs.
 */
export const ACQUIRE = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, string.len(ARGV[1]) + 1) ~= (ARGV[1] .. '|') then return {0, cur} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local e = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if e < now then e = now end
local es = string.format('%.0f', e)
redis.call('SET', KEYS[2], es)
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. es, 'PX', ARGV[2])
return {1, es}
`);

/** Extends a lease only while it still names this node and epoch. KEYS: lease. ARGV: value, leaseMs. */
export const RENEW = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/** Gives a lease up (handoff) so the next owner claims at once. KEYS: lease. ARGV: value. */
export const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Deletes a shard's lease only while it still names `node` (whatever the epoch), for a node found
 * crashed (decision 1116); answers {1, remaining TTL in ms} when it deleted the lease, else {0}. The
 * holder is the value's part before its last '|', so a node id containing '|' compares whole.
 * KEYS: lease. ARGV: node.
 */
export const EVICT_LEASE = new LuaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return {0} end
local holder = string.match(cur, '^(.*)|[0-9]+$')
if holder ~= ARGV[1] then return {0} end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
return {1, ttl}
`);

/**
 * The fenced write-through of one turn: applies only when the shard's epoch is the writer's epoch and
 * the lease still names the writer. Writes (or deletes) the snapshot, keeps the shard's timer index and
 * remembers the turn's reply under its de-duplication id, all at once. A retired snapshot is written with
 * an expiry (PX); any other SET writes it without one, so a snapshot changed again is kept (SET drops a
 * previous time to live).
 * The turn's pushes go to the actor's outbox in the same write (deleted once they were sent), so a node
 * that dies between the save and the sending leaves them to the actor's next activation.
 * KEYS: lease, epoch, snapshot, timers, dedupe, outbox.
 * ARGV: leaseValue, epoch, mode(set|del|none), snapshotJson, member, nextDue(''=none), replyJson(''=none),
 * dedupeTtlMs, snapshotExpiryMs(''=none), pushesJson(''=none).
 */
export const SAVE_TURN = new LuaScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == 'set' then
  if ARGV[9] == '' then redis.call('SET', KEYS[3], ARGV[4]) else redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[9]) end
elseif ARGV[3] == 'del' then redis.call('DEL', KEYS[3]) end
if ARGV[3] ~= 'none' then
  if ARGV[6] == '' then redis.call('ZREM', KEYS[4], ARGV[5]) else redis.call('ZADD', KEYS[4], ARGV[6], ARGV[5]) end
end
if ARGV[7] ~= '' then redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[8]) end
if ARGV[10] ~= '' then redis.call('SET', KEYS[6], ARGV[10], 'PX', ARGV[8]) end
return 1
`);

/**
 * Deletes an actor's outbox once its pushes were sent, if it still holds the entry that was sent (compare
 * and delete: a later turn's entry, of any owner, stays). KEYS: outbox. ARGV: the entry sent.
 */
export const CLEAR_OUTBOX = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** True while `node|epoch` is still the shard's lease and epoch. KEYS: lease, epoch. ARGV: value, epoch. */
export const CHECK_FENCE = new LuaScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return 1
`);

/**
 * Appends envelopes to a node's list and refreshes the list's TTL, in one command: the values in order
 * at the head (LPUSH), read from the tail. KEYS: list. ARGV: ttlMs, value...
 */
export const PUSH_ENVELOPES = new LuaScript(`
redis.call('LPUSH', KEYS[1], unpack(ARGV, 2))
return redis.call('PEXPIRE', KEYS[1], ARGV[1])
`);

/**
 * Membership on Redis server time (no clock agreement needed between nodes): drops expired nodes,
 * then joins (heartbeat), leaves or just reads. KEYS: nodes. ARGV: node, ttlMs, mode(join|leave|peek).
 */
export const HEARTBEAT = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[3] == 'join' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
elseif ARGV[3] == 'leave' then redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZRANGE', KEYS[1], 0, -1)
`);
