--[[ take: the consumer's one script. First the lease expiry: leases that ran out go back, due
  now, or to the dead letters after maxAttempts. Then the transfer: up to count due items, in
  deadline order, leased to the caller.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, count, visibility (ms), maxAttempts, reclaim (expired leases handled at most),
    token (a random part, new for each run: the deliveries' tokens are it and a number)
  Reply: now, head, lease head, 1 if the sequence counter was found gone while records remained
    (else 0), then per item handed out: id, value, deadline, attempt, token
]]
--- @include "time"
--- @include "queue"

local now = clock()
local nows = fmt(now)
local max_attempts = tonumber(ARGV[4])
local expired = redis.call('ZRANGEBYSCORE', leased, '-inf', nows, 'LIMIT', 0, tonumber(ARGV[5]))
local before = #expired > 0 and head()
for _, id in ipairs(expired) do
  redis.call('ZREM', leased, id)
  local raw = redis.call('HGET', items, id)
  local r = parse(raw)
  if r == nil then
    bury(id, nil, now, 'malformed record', raw)
  elseif r.attempt >= max_attempts then
    bury(id, r, now, 'lease expired on attempt ' .. r.attempt .. ' of ' .. max_attempts)
  else
    enqueue(id, r, nows)
  end
end
if #expired > 0 then announce(ARGV[1], before or nil) end

local out = { nows, false, false, 0 }
local count = tonumber(ARGV[2])
if count > 0 then
  local due = redis.call('ZRANGEBYSCORE', pending, '-inf', nows, 'LIMIT', 0, count)
  if #due > 0 then
    redis.call('ZREMRANGEBYRANK', pending, 0, #due - 1)
    local expiry = fmt(now + tonumber(ARGV[3]))
    local token = 0
    local lease = {} -- expiry, id, ... for one ZADD
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
          r.state, r.attempt, r.token = 'l', r.attempt + 1, ARGV[6] .. '-' .. string.format('%x', token)
          token = token + 1
          save(id, r)
          lease[#lease + 1] = expiry
          lease[#lease + 1] = id
          out[#out + 1] = id
          out[#out + 1] = r.value
          out[#out + 1] = r.deadline
          out[#out + 1] = r.attempt
          out[#out + 1] = r.token
        end
        -- else: a member left behind by a replaced record; it is gone now.
      end
    end
    if #lease > 0 then redis.call('ZADD', leased, unpack(lease)) end
  end
end
out[2] = head() or false
out[3] = lease_head() or false
out[4] = vanished and 1 or 0
return out
