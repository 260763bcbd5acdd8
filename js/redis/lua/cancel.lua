--[[ cancel: removes a pending item.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: 1 if the item was pending (it is gone now), else 0 (also for a schedule's pending
    occurrence, which is the schedule's: unschedule removes it)
]]
--- @include "record"
--- @include "schedule"

local r = parse(redis.call('HGET', items, ARGV[1]))
if r == nil or r.state ~= 'p' or is_chain(ARGV[1], r) then return 0 end
redis.call('ZREM', pending, r.seq .. ARGV[1])
redis.call('HDEL', items, ARGV[1])
return 1
