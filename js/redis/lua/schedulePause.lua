--[[ schedulePause: pauses a schedule: its pending occurrence is taken away and none is placed
  until scheduleResume (a run in flight finishes; its retries go on as items). The occurrence
  it waited for stays noted (due), so that resume places it again.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: 1 if it was running (0: paused already, ended, or no such schedule)
]]
--- @include "schedule"

local sid = ARGV[1]
local S = sched_get(sid)
if S == nil or S.paused == '1' or S.due == '' then return 0 end
local due, succ = S.due, S.succ
unplace(sid, S)
S.due, S.succ, S.paused = due, succ, '1'
sched_put(sid, S)
return 1
