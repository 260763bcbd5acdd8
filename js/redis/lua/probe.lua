--[[ probe: what the Redis user may not do of what the queue's scripts do, found without
  changing anything (each command with arguments that change nothing, the channel with a
  message consumers ignore). A connection runs it before its first call; a key or command
  permission missing for EVAL itself makes Redis refuse the probe.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel
  Reply: per refusal: what was refused (a command's name, or 'channel'), and Redis's error
]]
--- @include "keys"

local out = {}
local function try(what, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    out[#out + 1] = what
    out[#out + 1] = r.err
  end
end

try('time', 'TIME')
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
return out
