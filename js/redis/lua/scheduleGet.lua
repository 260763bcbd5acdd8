--[[ scheduleGet: one schedule, read only (nextRuns computes from it).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: the schedule as includes/schedule.lua's sched_reply gives it, or empty for none
]]
--- @include "schedule"

local S = sched_get(ARGV[1])
local out = {}
if S then sched_reply(out, ARGV[1], S) end
return out
