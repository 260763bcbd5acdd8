--[[ scheduleAdvance: a client's answer for a cron schedule (the take script asked for it):
  accepted only while the schedule's pending occurrence is still the one it was computed for,
  under the same version of its rule (compare-and-set on its due time and the version), so
  that two clients cannot both place the next one, and an answer computed under a rule that
  schedule() has replaced since is refused. The
  pending occurrence becomes `keep` (itself, or the latest missed one for catchUp "one", or the
  next one for "none") and its successor `succ`.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id, due (what the client computed for), keep ('end' when the rule has no more),
    succ ('end' when none follows keep), version (of the rule it computed with, as the take
    script's need gave it)
  Reply: 1 if accepted (0: the schedule moved on, or is gone), head
]]
--- @include "queue"
--- @include "schedule"

local sid, due, keep = ARGV[2], ARGV[3], ARGV[4]
local S = sched_get(sid)
if S == nil or S.kind ~= 'c' or S.due ~= due or S.version ~= ARGV[6] then return { 0, head() or false } end
local before = head()
if keep ~= 'end' and ends(S, S.runs, tonumber(keep)) then keep = 'end' end -- past stopAt: it ends
if keep ~= due then
  if keep ~= 'end' and S.last ~= '' and tonumber(keep) <= tonumber(S.last) then return { 0, head() or false } end
  unplace(sid, S)
  if keep ~= 'end' then place(sid, S, tonumber(keep)) end
end
S.succ = ARGV[5]
sched_put(sid, S)
return { 1, announce(ARGV[1], before) or false }
