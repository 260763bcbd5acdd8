--[[ clear: removes every item of the queue (pending, in flight and dead) and every schedule.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: none
  Reply: the number of keys removed
]]
--- @include "keys"

return redis.call('DEL', items, pending, leased, dead, reasons, schedules)
