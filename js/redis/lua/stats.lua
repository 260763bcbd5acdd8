--[[ stats: what the queue holds, counted without scanning.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: none
  Reply: now, pending, in flight, dead, head, lease head
]]
--- @include "time"
--- @include "queue"

return { fmt(clock()), redis.call('ZCARD', pending), redis.call('ZCARD', leased), redis.call('ZCARD', dead),
  head() or false, lease_head() or false }
