-- Schedules: a schedule's record in the schedules hash (id -> record), the one place that reads
-- or writes one, and the steps of its chain of occurrences (docs/schedules.md has the rules):
--
--   kind '|' rule '|' start '|' zone '|' catchUp '|' overlap '|' due '|' succ '|' last '|'
--   began '|' wait '|' runs '|' skipped '|' 'v' version '|' running '|' 'l' maxRuns '|' stopAt '|'
--   paused '|' value
--
-- kind e (every: rule its period in ms, start its first occurrence) or c (cron: rule the
-- expression, zone its IANA time zone, start '' or the instant given); catchUp one, all or
-- none; overlap 1 or 0; due its one pending occurrence ('' once its rule has none left);
-- succ, for cron, the occurrence after due as a client computed it ('' not known yet, 'end'
-- none); last the due time of the latest run handed out and began the server time it was
-- ('' before the first); wait 1 while the pending occurrence waits for that run to end; runs
-- and skipped the counts; version the rule's version, new (a seq of the queue's counter)
-- each time schedule() changes what a client computes for it (expression, zone, catchUp) or
-- replaces its chain, so that a successor computed under an older rule is refused; running
-- the due time of the run handed out last, first delivery or retry ('' none); value the
-- JSON text every occurrence carries; maxRuns and stopAt the limits ('' none: spec.js
-- `endsAt`), paused 1 while pauseSchedule() holds it (due the occurrence it waits for, with no
-- item for it). Times are whole epoch ms ('%.0f': whole), began ms with decimals. A record
-- written before version and running existed reads as version 0, running ''; one written
-- before the limits, with none and not paused.
--
-- An occurrence is an item (includes/record.lua) whose record names its schedule, with the id
-- occurrence_id(schedule id, due) (includes defs): each schedule has exactly one pending, the
-- chain's next. The script that hands it out (take: occur) places the next one, so no process
-- can die in between; Lua computes `every` (includes/every.lua), and for cron (which needs
-- time zones) a client computes the successor and the advance script accepts it only while
-- the schedule is still at the due time and the rule version it was computed for
-- (compare-and-set), so two clients cannot both place it, nor a stale rule's answer land.
--
-- overlap false: a run lasts from its first delivery until it is acked or dead-lettered, its
-- retries included (waiting for the retry, or running it). Two runs of one schedule are never
-- leased at once: an occurrence that comes due while a run lasts is skipped, or waits for it
-- (a catch-up "all" occurrence due before that run began), and a retry waits while another
-- run of its schedule is leased.

--- @include "time"
--- @include "queue"
--- @include "every"

local function whole(t) return string.format('%.0f', t) end -- luacheck: ignore 211

local SCHEDULE = '^([ec])|([^|]*)|([^|]*)|([^|]*)|(%a+)|([01])|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([01])|(%d+)|(%d+)|()'

-- The record of schedule sid as a table, or nil when there is none (or it is not one).
local function sched_get(sid) -- luacheck: ignore 211
  local rec = redis.call('HGET', schedules, sid)
  if not rec then return nil end
  local kind, rule, origin, zone, catch, overlap, due, succ, last, began, wait, runs, skipped, at =
    string.match(rec, SCHEDULE)
  if kind == nil then return nil end
  -- JSON text never starts with v: a record without these fields is one written before them.
  local version, running, from = string.match(rec, '^v(%d+)|(%-?%d*)|()', at)
  if version == nil then version, running, from = '0', '', at end
  -- Nor with l: a record without the limits is one written before them.
  local max_runs, stop_at, held, rest = string.match(rec, '^l(%d*)|(%-?%d*)|([01])|()', from)
  if max_runs == nil then max_runs, stop_at, held, rest = '', '', '0', from end
  return { kind = kind, rule = rule, start = origin, zone = zone, catch = catch, overlap = overlap, due = due,
    succ = succ, last = last, began = began, wait = wait, runs = tonumber(runs), skipped = tonumber(skipped),
    version = version, running = running, max_runs = max_runs, stop_at = stop_at, paused = held,
    value = string.sub(rec, rest) }
end

local function sched_put(sid, S) -- luacheck: ignore 211
  redis.call('HSET', schedules, sid, table.concat({ S.kind, S.rule, S.start, S.zone, S.catch, S.overlap, S.due,
    S.succ, S.last, S.began, S.wait, string.format('%d', S.runs), string.format('%d', S.skipped),
    'v' .. S.version, S.running, 'l' .. S.max_runs, S.stop_at, S.paused, S.value }, '|'))
end

-- Whether a schedule that has made `runs` runs ends rather than wait for occurrence t (nil:
-- its rule has none): maxRuns reached, or t after stopAt (spec.js endsAt).
local function ends(S, runs, t) -- luacheck: ignore 211
  if t == nil then return true end
  if S.max_runs ~= '' and runs >= tonumber(S.max_runs) then return true end
  return S.stop_at ~= '' and t > tonumber(S.stop_at)
end

-- What a reply says of a schedule: id, kind, rule, start, zone, catchUp, overlap, due, last,
-- runs, skipped, maxRuns, stopAt, paused, value.
local function sched_reply(out, sid, S) -- luacheck: ignore 211
  for _, v in ipairs({ sid, S.kind, S.rule, S.start, S.zone, S.catch, S.overlap, S.due, S.last, S.runs, S.skipped,
    S.max_runs, S.stop_at, S.paused, S.value }) do
    out[#out + 1] = v
  end
end

-- An every schedule's rule (includes/every.lua) on its record.
local function every_of(S) return tonumber(S.start), tonumber(S.rule) end

-- Makes the occurrence due at `due` the schedule's pending one, as an item; an item of that id
-- already present is kept (ifExists "keep"). Occurrences placed are always later than any run
-- handed out, so that id is free but for an item a caller offered under it.
-- A paused schedule only notes it (due), with no item.
local function occurrence_item(sid, S, due)
  local id = occurrence_id(sid, whole(due))
  if redis.call('HEXISTS', items, id) == 1 then return false end
  local r = { state = 'p', seq = hex(seqs(1)), deadline = fmt(due), attempt = 0, token = '', schedule = sid,
    value = S.value }
  save(id, r)
  redis.call('ZADD', pending, r.deadline, r.seq .. id)
  return true
end

local function place(sid, S, due) -- luacheck: ignore 211
  S.due = whole(due)
  if S.paused == '1' then return end
  occurrence_item(sid, S, due)
end

-- The schedule's pending occurrence: its id and record, when it is there and pending.
local function pending_occurrence(sid, S) -- luacheck: ignore 211
  if S.due == '' then return nil end
  local id = occurrence_id(sid, S.due)
  local r = parse(redis.call('HGET', items, id))
  if r and r.state == 'p' and r.schedule == sid then return id, r end
  return nil
end

-- Takes the schedule's pending occurrence away (it is removed, or its rule changed).
local function unplace(sid, S) -- luacheck: ignore 211
  local id, r = pending_occurrence(sid, S)
  if id then
    redis.call('ZREM', pending, r.seq .. id)
    redis.call('HDEL', items, id)
  end
  S.due, S.succ, S.wait = '', '', '0'
end

-- Whether the item id (record r) is its schedule's pending occurrence: it belongs to the
-- schedule (cancel and reschedule leave it alone; unschedule() removes it).
local function is_chain(id, r) -- luacheck: ignore 211
  if r.schedule == nil then return false end
  local S = sched_get(r.schedule)
  return S ~= nil and S.due ~= '' and occurrence_id(r.schedule, S.due) == id
end

-- A client is asked to compute what a cron schedule's rule says: { sid, due, now, expression,
-- zone, catchUp, version }; its answer goes to the advance script.
local function ask(needs, sid, S, now)
  needs[#needs + 1] = { sid, S.due, fmt(now), S.rule, S.zone, S.catch, S.version }
end

-- overlap false: the lease expiry of a run of schedule sid other than item id that is leased
-- now (the run handed out last, or the latest run), or nil.
local function leased_run(sid, S, id)
  for _, due in ipairs({ S.running, S.last }) do
    if due ~= '' then
      local rid = occurrence_id(sid, due)
      if rid ~= id then
        local expiry = redis.call('ZSCORE', leased, rid)
        if expiry then return tonumber(expiry) end
      end
    end
  end
  return nil
end

-- overlap false: until when a run of schedule sid other than item id lasts, as far as is known
-- now: its lease expiry while it is leased, its retry's deadline while it waits for it; nil
-- when no run lasts.
local function run_lasts(sid, S, id)
  local expiry = leased_run(sid, S, id)
  if expiry or S.last == '' then return expiry end
  local lid = occurrence_id(sid, S.last)
  if lid == id then return nil end
  local r = parse(redis.call('HGET', items, lid))
  if r and r.state == 'p' and r.schedule == sid then return tonumber(r.deadline) end
  return nil
end

-- The take script is about to hand out item id (record r), of schedule sid, that is not its
-- pending occurrence (a retry, or an item released): with overlap false, it waits while
-- another run of the schedule is leased (put back at that lease's expiry; returns nil).
-- Returns id, r to hand out.
local function retry(id, r) -- luacheck: ignore 211
  local sid = r.schedule
  local S = sched_get(sid)
  if S == nil or S.overlap ~= '0' then return id, r end
  local expiry = leased_run(sid, S, id)
  if expiry then
    enqueue(id, r, fmt(expiry))
    return nil
  end
  local due = occurrence_due(id)
  if due and S.running ~= due then
    S.running = due
    sched_put(sid, S)
  end
  return id, r
end

-- The take script has taken item id (record r, a schedule's occurrence, due by now) out of
-- the pending set. When it is its schedule's pending occurrence, decides what happens to it
-- in this script, and places the next one:
-- - catchUp decides what runs (the occurrence, the latest missed one, or none);
-- - overlap false: while a run of the schedule lasts (leased, or waiting for its retry), an
--   occurrence that came due after that run began is skipped and counted; one that was due
--   before (a catch-up "all") waits for it to end (until its lease runs out or its retry is
--   due, when it looks again, or its ack);
-- - a cron schedule whose successor is not known (or that fell behind, for "one" and "none")
--   stays pending, and a client is asked (needs).
-- Returns the id and record to hand out (the record's deadline the occurrence's due time), or
-- nil when nothing is handed out. Any other item (a retry of an occurrence, one released, one
-- of a schedule removed) is handed out as retry() says.
local function occur(id, r, now, needs, skips) -- luacheck: ignore 211
  local sid = r.schedule
  local S = sched_get(sid)
  if S == nil or S.due == '' or occurrence_id(sid, S.due) ~= id then return retry(id, r) end
  local due = tonumber(S.due)
  local run, after
  if S.kind == 'e' then
    local first, period = every_of(S)
    run, after = every_catch_up(first, period, S.catch, due, now)
  else
    if S.succ ~= 'end' then after = tonumber(S.succ) end
    if S.succ == '' or (after ~= nil and after <= now and S.catch ~= 'all') then
      redis.call('ZADD', pending, r.deadline, r.seq .. id) -- back in its place, until a client answers
      ask(needs, sid, S, now)
      return nil
    end
    run = due
  end
  if run ~= nil and S.stop_at ~= '' and run > tonumber(S.stop_at) then run = nil end -- a catch-up "one" past the end
  if run ~= nil and S.overlap == '0' then
    local lasts = run_lasts(sid, S, id)
    if lasts then
      if S.began ~= '' and run > tonumber(S.began) then
        S.skipped = S.skipped + 1
        skips[#skips + 1] = sid
        skips[#skips + 1] = whole(run)
        run = nil
      else
        S.wait = '1'
        sched_put(sid, S)
        enqueue(id, r, fmt(math.max(lasts, now)))
        return nil
      end
    end
  end
  redis.call('HDEL', items, id)
  S.wait = '0'
  if after ~= nil and ends(S, S.runs + (run and 1 or 0), after) then after = nil end -- its last run
  if after ~= nil then place(sid, S, after) else S.due = '' end
  if S.kind == 'c' then
    S.succ = ''
    if after ~= nil then ask(needs, sid, S, now) end
  end
  if run == nil then
    sched_put(sid, S)
    return nil
  end
  S.last, S.began, S.runs = whole(run), fmt(now), S.runs + 1
  S.running = S.last
  sched_put(sid, S)
  r.deadline = fmt(run)
  return occurrence_id(sid, S.last), r
end

-- The due time of occurrence id (record r), for its delivery's deadline: the one in its id,
-- whatever deadline a retry or a wait gave its record.
local function due_of(id, r) -- luacheck: ignore 211
  local due = occurrence_due(id)
  return due and fmt(tonumber(due)) or r.deadline
end

-- The run of item id, an occurrence of schedule sid, ended (acked, or dead-lettered): an
-- occurrence that waits for that run is due now.
local function ended(sid, id) -- luacheck: ignore 211
  local S = sched_get(sid)
  if S == nil or S.wait ~= '1' or S.last == '' or occurrence_id(sid, S.last) ~= id then return end
  S.wait = '0'
  sched_put(sid, S)
  local pid, pr = pending_occurrence(sid, S)
  if pid == nil then return end
  local before = head()
  redis.call('ZREM', pending, pr.seq .. pid)
  enqueue(pid, pr, fmt(clock()))
  announce(head_channel(), before)
end

-- One extra run of schedule sid now (scheduleTrigger): an item `<sid>@<now>` due now, counted
-- as a run; its last one (maxRuns) ends the schedule. With overlap false, none while a run of
-- the schedule lasts. Returns whether it was added.
local function trigger(sid, S, now) -- luacheck: ignore 211
  if S.due == '' and S.paused ~= '1' then return false end
  if S.overlap == '0' and run_lasts(sid, S, '') then return false end
  local at = math.ceil(now)
  if S.last ~= '' then at = math.max(at, tonumber(S.last) + 1) end
  if not occurrence_item(sid, S, at) then return false end
  S.last, S.began, S.runs = whole(at), fmt(now), S.runs + 1
  S.running = S.last
  if S.max_runs ~= '' and S.runs >= tonumber(S.max_runs) then
    unplace(sid, S)
    S.paused = '0'
  end
  return true
end
