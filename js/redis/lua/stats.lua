--[[ stats: what the queue holds, counted without scanning.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: none
  Reply: now, pending, in flight, dead, head, lease head, then the meta hash as field, value, ...
    (includes/meta.lua: paused, the counts of every process, the lateness histogram)
]]
--- @include "time"
--- @include "queue"

local out = { fmt(clock()), redis.call('ZCARD', pending), redis.call('ZCARD', leased), redis.call('ZCARD', dead),
  head() or false, lease_head() or false }
for _, x in ipairs(redis.call('HGETALL', meta)) do out[#out + 1] = x end
return out
