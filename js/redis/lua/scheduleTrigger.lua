--[[ scheduleTrigger: one extra run of a schedule now (includes/schedule.lua trigger): an item
  `<id>@<now>` due now, delivered like an occurrence and counted as a run; the pending
  occurrence stays. With overlap false, nothing while a run of the schedule lasts.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id
  Reply: 1 if the run was added (else 0), head
]]
--- @include "time"
--- @include "queue"
--- @include "schedule"

local sid = ARGV[2]
local S = sched_get(sid)
if S == nil then return { 0, head() or false } end
local before = head()
if not trigger(sid, S, clock()) then return { 0, head() or false } end
sched_put(sid, S)
return { 1, announce(ARGV[1], before) or false }
