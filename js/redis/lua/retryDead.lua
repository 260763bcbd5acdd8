--[[ retryDead: a dead letter goes back, due now, with its attempts reset.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id
  Reply: 1 if it was dead (else 0), head, 1 if the sequence counter was found gone while records
    remained
]]
--- @include "time"
--- @include "queue"

local now = clock()
local r = parse(redis.call('HGET', items, ARGV[2]))
if r == nil or r.state ~= 'd' then return { 0, head() or false } end
local before = head()
redis.call('ZREM', dead, ARGV[2])
redis.call('HDEL', reasons, ARGV[2])
r.attempt = 0
enqueue(ARGV[2], r, fmt(now))
return { 1, announce(ARGV[1], before) or false, vanished and 1 or 0 }
