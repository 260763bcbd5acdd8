--[[ scheduleResume: resumes a paused schedule: the occurrence it waited for is placed again;
  if it came due meanwhile, the take script's catchUp decides what runs, as for a queue whose
  consumers were all down.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id
  Reply: 1 if it was paused (else 0), head
]]
--- @include "queue"
--- @include "schedule"

local sid = ARGV[2]
local S = sched_get(sid)
if S == nil or S.paused ~= '1' then return { 0, head() or false } end
local before = head()
S.paused = '0'
if S.due ~= '' then place(sid, S, tonumber(S.due)) end
sched_put(sid, S)
return { 1, announce(ARGV[1], before) or false }
