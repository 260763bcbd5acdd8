--[[ scheduleRemove: removes a schedule and its pending occurrence (occurrences in flight or
  waiting for a retry go on as items).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: 1 if there was such a schedule, else 0
]]
--- @include "schedule"

local S = sched_get(ARGV[1])
if S == nil then return 0 end
unplace(ARGV[1], S)
redis.call('HDEL', schedules, ARGV[1])
return 1
