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

export const APPEND = new LuaScript(`${APPEND_FUNCTION}
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
export const APPEND_ROSTERS = new LuaScript(`${APPEND_FUNCTION}
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

/**
 * Reads a recipient's history after a position. Without a position (empty epoch): the current position
 * ('current'). With one: 'ok' and every push after it, oldest first, when the history still holds them
 * all within the window; otherwise 'resync' with the current position. A stream of an earlier run of the
 * server gets a new epoch here too. KEYS: stream, position hash.
 * ARGV: epoch, seq, windowMs, positionTtlMs, fresh epoch, peek ('1': answer without the pushes).
 */
export const READ = new LuaScript(`
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
