--[[ take: the consumer's one script. First the lease expiry: leases that ran out go back, due
  now, or to the dead letters after maxAttempts. Then, unless the queue is paused, the
  transfer: up to count due items, in deadline order, leased to the caller. Counts the
  deliveries, their lateness and the expired leases in meta, and tells observers.
  KEYS: the queue's keys (includes/keys.lua)
  A schedule's occurrence is handed out as includes/schedule.lua (occur) decides, and its next
  occurrence placed in the same run.
  ARGV: channel, count, visibility (ms), maxAttempts, reclaim (expired leases handled at most),
    token (a random part, new for each run: the deliveries' tokens are it and a number)
  Reply: now, head, lease head, paused (1 or 0), the number of expired leases handled, needs
    (per cron schedule whose rule a client must compute: { id, due, now, expression, zone,
    catchUp, version }), skipped (per occurrence skipped for overlap: schedule id, due), 1 if the
    sequence counter was found gone while records remained (else 0), then per
    expired lease: id, attempt, outcome ('p' back in the queue, 'd' dead, reason); then per
    item handed out: id, value, deadline (an occurrence's: its due time, retries included),
    attempt, token, schedule (its id, or false)
]]
--- @include "time"
--- @include "queue"
--- @include "meta"
--- @include "schedule"

local now = clock()
local nows = fmt(now)
local max_attempts = tonumber(ARGV[4])
local expired = redis.call('ZRANGEBYSCORE', leased, '-inf', nows, 'LIMIT', 0, tonumber(ARGV[5]))
local before = #expired > 0 and head()
local reclaimed = {}
for _, id in ipairs(expired) do
  redis.call('ZREM', leased, id)
  local raw = redis.call('HGET', items, id)
  local r = parse(raw)
  local outcome, reason, attempt = 'p', '', r and r.attempt or 0
  if r == nil then
    outcome, reason = 'd', 'malformed record'
    bury(id, nil, now, reason, raw)
  elseif r.attempt >= max_attempts then
    outcome, reason = 'd', 'lease expired on attempt ' .. r.attempt .. ' of ' .. max_attempts
    bury(id, r, now, reason)
    if r.schedule then ended(r.schedule, id) end
  else
    enqueue(id, r, nows)
  end
  if outcome == 'd' then
    count('dead')
    tell('dead', 'id', id, 'reason', reason)
  else
    count('redelivered')
    tell('redelivered', 'id', id, 'attempt', attempt)
  end
  reclaimed[#reclaimed + 1] = id
  reclaimed[#reclaimed + 1] = attempt
  reclaimed[#reclaimed + 1] = outcome
  reclaimed[#reclaimed + 1] = reason
end
if #expired > 0 then announce(ARGV[1], before or nil) end

local is_paused = paused()
local needs, skips = {}, {}
local out = { nows, false, false, is_paused and 1 or 0, #expired, needs, skips, 0 }
for _, x in ipairs(reclaimed) do out[#out + 1] = x end
local wanted = is_paused and 0 or tonumber(ARGV[2])
local latenesses = {} -- of the items handed out
if wanted > 0 then
  local due = redis.call('ZRANGEBYSCORE', pending, '-inf', nows, 'LIMIT', 0, wanted)
  if #due > 0 then
    redis.call('ZREMRANGEBYRANK', pending, 0, #due - 1)
    local expiry = fmt(now + tonumber(ARGV[3]))
    local token = 0
    -- The leases, expiry, id, ..., for one ZADD; written before a schedule's occurrence is
    -- looked at, since occur reads the lease of that schedule's previous run.
    local lease = {}
    local function lease_all()
      if #lease > 0 then redis.call('ZADD', leased, unpack(lease)) end
      lease = {}
    end
    for _, member in ipairs(due) do
      local s, id = string.sub(member, 1, 16), string.sub(member, 17)
      if id == '' or not string.match(s, '^%x+$') then
        -- Not written by tarry: keep it as a dead letter under its own name, unless that
        -- name is a live item's id.
        if redis.call('HEXISTS', items, member) == 0 then
          bury(member, nil, now, 'malformed pending entry', member)
        end
      else
        local raw = redis.call('HGET', items, id)
        local r = parse(raw)
        if r == nil then
          bury(id, nil, now, raw and 'malformed record' or 'pending entry without a record', raw or member)
        elseif r.state == 'p' and r.seq == s then
          if r.schedule then
            lease_all()
            id, r = occur(id, r, now, needs, skips)
          end
          if id then
            r.state, r.attempt, r.token = 'l', r.attempt + 1, ARGV[6] .. '-' .. string.format('%x', token)
            token = token + 1
            save(id, r)
            lease[#lease + 1] = expiry
            lease[#lease + 1] = id
            local deadline = r.schedule and due_of(id, r) or r.deadline
            local lateness = now - tonumber(deadline)
            latenesses[#latenesses + 1] = lateness
            tell('delivered', 'id', id, 'attempt', r.attempt, 'deadline', deadline,
              'lateness', fmt(math.max(0, lateness)))
            out[#out + 1] = id
            out[#out + 1] = r.value
            out[#out + 1] = deadline
            out[#out + 1] = r.attempt
            out[#out + 1] = r.token
            out[#out + 1] = r.schedule or false
          end
        end
        -- else: a member left behind by a replaced record; it is gone now.
      end
    end
    lease_all()
  end
end
-- Counted once per run, not per item.
if #latenesses > 0 then
  count('delivered', #latenesses)
  record_latenesses(latenesses)
end
out[2] = head() or false
out[3] = lease_head() or false
out[8] = vanished and 1 or 0
return out
