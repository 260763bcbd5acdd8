--[[ probe: what the Redis user may not do of what the queue's scripts do, found without
  changing anything (each command with arguments that change nothing, the channel with a
  message consumers ignore). A connection runs it before its first call; a key or command
  permission missing for EVAL itself makes Redis refuse the probe.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, shards (the number of shards the queue is opened with, on the shard that keeps
    it: the one whose tag is the queue's name; '0' on the others: js/redis/shards.js)
  Reply: now, or '-' when TIME is refused (the connection's first sample of the server's
    clock, so that the calls waiting behind the probe are stamped with the time they were
    made, not with the time they reach Redis), then per refusal: what was
    refused (a command's name, or 'channel'), and Redis's error; or 'shards' and the number of
    shards the queue was created with, when it is not ARGV[2]. The one write: a queue's
    first probe records its number of shards in meta.
]]
--- @include "keys"
--- @include "time"

local out = { '-' } -- the time, once TIME is known to be allowed
local function try(what, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    out[#out + 1] = what
    out[#out + 1] = r.err
  end
end

try('time', 'TIME')
if #out == 1 then out[1] = fmt(clock()) end
try('hget', 'HGET', items, '')
try('hexists', 'HEXISTS', items, '')
try('hdel', 'HDEL', items, '')
try('zadd', 'ZADD', pending, 'XX', 0, '')
try('zrem', 'ZREM', pending, '')
try('zrange', 'ZRANGE', pending, 0, 0)
try('zrangebyscore', 'ZRANGEBYSCORE', pending, '-inf', '-inf', 'LIMIT', 0, 1)
try('zremrangebyrank', 'ZREMRANGEBYRANK', pending, 1, 0)
try('zrank', 'ZRANK', dead, '')
try('zscore', 'ZSCORE', dead, '')
try('zcard', 'ZCARD', dead)
try('channel', 'PUBLISH', ARGV[1], 'probe')

-- The number of shards: the first probe of a queue records it, whatever it is (1 too), so that
-- every process that opens the queue with another number is refused at its first call, the
-- one that came first or not. None recorded on a queue that holds items: one (a queue made
-- before the number was recorded).
local shards = ARGV[2]
if shards ~= '0' and #out == 1 then
  local kept = redis.call('HGET', meta, 'shards')
  if not kept then
    if shards ~= '1' and redis.call('EXISTS', seqkey, items, pending, leased, dead) > 0 then
      kept = '1'
    else
      kept = shards
    end
    redis.pcall('HSET', meta, 'shards', kept) -- a user that may only read the keys records nothing
  end
  if kept ~= shards then
    out[#out + 1] = 'shards'
    out[#out + 1] = kept
  end
end
return out
