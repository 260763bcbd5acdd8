--[[ scheduleUpsert: creates a schedule, or updates the one of that id. Its chain stays when its
  rule is the same (kind, period or expression, zone, and start when given) and its pending
  occurrence is there: that keeps its due time and takes the new value; otherwise the pending
  occurrence is replaced by the rule's first, which is always later than the latest run (so no
  occurrence runs twice). Runs, skipped and the last run are kept.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id, kind ('e' every, 'c' cron), rule (the period, or the expression), start
    ('' or epoch ms), zone, catchUp, overlap ('1' or '0'), value, and for cron: first (the rule's
    first occurrence at or after the start the client chose, '' for none), succ (the one after
    it, '' for none); then maxRuns and stopAt ('' for none)
  Reply: now, 1 (created), 2 (updated) or 0 (nothing changed: cron's first occurrence must come
    after the third field, the latest run or the replaced occurrence, and the client computes it
    again from there) or 3 (nothing changed: a new schedule's first occurrence, the third field,
    is after stopAt); then
    the schedule as includes/schedule.lua's sched_reply gives it
  A schedule whose limits are reached (maxRuns, stopAt) ends: no occurrence pending. A paused
  one stays paused: its occurrence noted, with no item.
  The rule's version is new whenever what a client computes for the schedule changes (its
  expression, zone or catchUp) or its chain is replaced: an answer computed before is refused
  (scheduleAdvance).
]]
--- @include "time"
--- @include "queue"
--- @include "schedule"

local now = clock()
local sid = ARGV[2]
local old = sched_get(sid)
local S = { kind = ARGV[3], rule = ARGV[4], start = ARGV[5], zone = ARGV[6], catch = ARGV[7], overlap = ARGV[8],
  value = ARGV[9], due = '', succ = '', last = '', began = '', wait = '0', runs = 0, skipped = 0, version = '0',
  running = '', max_runs = ARGV[12] or '', stop_at = ARGV[13] or '', paused = '0' }
if old then
  S.last, S.began, S.runs, S.skipped, S.version, S.running = old.last, old.began, old.runs, old.skipped, old.version,
    old.running
  S.paused = old.paused
end
local before = head()
local same = old and old.kind == S.kind and old.rule == S.rule and old.zone == S.zone
  and (S.start == '' or S.start == old.start)
local pid, pr
if old then pid, pr = pending_occurrence(sid, old) end
-- A paused schedule's occurrence has no item: it is noted, not gone.
local kept = pid or (old and old.paused == '1' and old.due ~= '')
if same and kept and ends(S, S.runs, tonumber(old.due)) then kept = false end -- its limits are reached
if not (same and kept and old.catch == S.catch) then S.version = string.format('%d', seqs(1)) end
if same and kept then
  -- The same rule: the chain goes on.
  S.start, S.due, S.succ, S.wait = old.start, old.due, old.succ, old.wait
  if pr and pr.value ~= S.value then
    pr.value = S.value
    save(pid, pr)
  end
else
  -- The first occurrence after now and after the latest run, and after a pending occurrence
  -- that an item offered under its id replaced.
  local floor = S.last ~= '' and tonumber(S.last) or nil
  if old and old.due ~= '' and not pid and old.paused ~= '1' then
    floor = math.max(floor or tonumber(old.due), tonumber(old.due))
  end
  local from = math.ceil(now)
  if floor then from = math.max(from, floor + 1) end
  local first
  if same then S.start = old.start end -- the same rule keeps its phase
  if S.kind == 'e' then
    if S.start == '' then S.start = whole(math.ceil(now + tonumber(S.rule))) end
    local origin, period = every_of(S)
    first = every_next(origin, period, from - 1) -- nil past the latest instant: no occurrence
  else
    first = tonumber(ARGV[10])
    if first ~= nil and floor and first <= floor then return { fmt(now), 0, whole(floor) } end
    S.succ = ARGV[11] == '' and 'end' or ARGV[11]
  end
  if first ~= nil and not old and S.stop_at ~= '' and first > tonumber(S.stop_at) then
    return { fmt(now), 3, whole(first) }
  end
  if old then unplace(sid, old) end
  if first ~= nil and not ends(S, S.runs, first) then place(sid, S, first) end
end
sched_put(sid, S)
announce(ARGV[1], before)
local out = { fmt(now), old and 2 or 1 }
sched_reply(out, sid, S)
return out
