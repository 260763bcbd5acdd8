-- Where an item is: the head of the pending set, and the moves between the pending, leased
-- and dead sets that keep an item in exactly one of them, as its record's state says.

--- @include "time"
--- @include "record"

local function head() -- luacheck: ignore 211
  return redis.call('ZRANGE', pending, 0, 0, 'WITHSCORES')[2]
end

local function lease_head() -- luacheck: ignore 211
  return redis.call('ZRANGE', leased, 0, 0, 'WITHSCORES')[2]
end

-- Tells the consumers of a new head's deadline. A PUBLISH the Redis user may not make (no
-- channel permission) is skipped, not an error: the script has changed keys already, and a
-- script is not undone. Each connection checks that permission first (probe.lua).
local function publish(channel, deadline)
  redis.pcall('PUBLISH', channel, deadline)
end

-- Tells the consumers when the head became earlier than 'before' (Redisson's rule: they
-- re-arm their one timer on this message). Returns the head's deadline.
local function announce(channel, before) -- luacheck: ignore 211
  local after = head()
  if after and (before == nil or tonumber(after) < tonumber(before)) then publish(channel, after) end
  return after
end

-- Puts r back to wait for its deadline, behind the items already waiting at that deadline.
local function enqueue(id, r, deadline) -- luacheck: ignore 211
  r.state, r.seq, r.deadline, r.token = 'p', hex(seqs(1)), deadline, ''
  save(id, r)
  redis.call('ZADD', pending, deadline, r.seq .. id)
end

-- Takes id out of whatever set holds it (its record stays).
local function unlink(id, r) -- luacheck: ignore 211
  if r == nil then
    redis.call('ZREM', leased, id)
    redis.call('ZREM', dead, id)
    redis.call('HDEL', reasons, id)
  elseif r.state == 'p' then
    redis.call('ZREM', pending, r.seq .. id)
  elseif r.state == 'l' then
    redis.call('ZREM', leased, id)
  else
    redis.call('ZREM', dead, id)
    redis.call('HDEL', reasons, id)
  end
end

-- Moves id to the dead letters at now (a time as clock() gives it). r is nil for a record
-- that could not be read: what was there is kept as raw text beside the reason; a stack
-- (of the handler's error) is kept beside it too, when one is given ('' is none).
local function bury(id, r, now, reason, raw, stack) -- luacheck: ignore 211
  if r == nil then
    r = { seq = hex(0), deadline = fmt(now), attempt = 0, value = 'null' }
  end
  r.state, r.token = 'd', ''
  save(id, r)
  redis.call('ZADD', dead, fmt(now), id)
  if stack == '' then stack = nil end
  redis.call('HSET', reasons, id, cjson.encode({ reason = reason, raw = raw, stack = stack }))
end

-- The record of id if the delivery with this token still holds its lease, else nil.
local function leased_by(id, token) -- luacheck: ignore 211
  local r = parse(redis.call('HGET', items, id))
  if r and r.state == 'l' and r.token == token then return r end
  return nil
end
