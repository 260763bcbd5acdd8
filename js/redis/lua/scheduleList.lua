--[[ scheduleList: a page of the schedules, in the order HSCAN gives them.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: cursor ('0' for the first page), count (about how many)
  Reply: the next cursor ('0' after the last page), then per schedule what
    includes/schedule.lua's sched_reply gives
]]
--- @include "schedule"

local page = redis.call('HSCAN', schedules, ARGV[1], 'COUNT', tonumber(ARGV[2]))
local out = { page[1] }
local fields = page[2]
for i = 1, #fields, 2 do
  local S = sched_get(fields[i])
  if S then sched_reply(out, fields[i], S) end
end
return out
