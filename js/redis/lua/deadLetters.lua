--[[ deadLetters: a page of dead letters in order of death (ties by id, as the dead set sorts
  them), from the first or after a cursor (the time of death and id of the last letter of the
  page before; if that letter is gone, the page starts where it stood). O(log n + limit).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: limit, then the cursor's time of death and id ('' and '' for the first page)
  Reply: 1 if more follow the page (else 0), then per dead letter: id, text, deadline,
    attempt, reason, time of death; where its record reads, text is its value, deadline and
    attempt its own; where it does not, text is what the items hash holds (or false),
    deadline false and attempt 0. reason is the JSON { reason, raw? } kept when it died (or
    whatever else the reasons hash holds), or false.
]]
--- @include "record"

local limit = tonumber(ARGV[1])

-- Whether string a sorts before b byte by byte, as a sorted set sorts its members.
local function sorts_before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Up to limit + 1 [id, time of death] pairs, flat, after the cursor.
local function page()
  if ARGV[2] == '' then return redis.call('ZRANGE', dead, 0, limit, 'WITHSCORES') end
  local rank = redis.call('ZRANK', dead, ARGV[3])
  if rank and tonumber(redis.call('ZSCORE', dead, ARGV[3])) == tonumber(ARGV[2]) then
    return redis.call('ZRANGE', dead, rank + 1, rank + 1 + limit, 'WITHSCORES')
  end
  -- The cursor's letter is gone: skip the letters that died at its time and sort before it.
  local out, offset, score = {}, 0, tonumber(ARGV[2])
  while #out < 2 * (limit + 1) do
    local got = redis.call('ZRANGEBYSCORE', dead, ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', offset, limit + 1)
    if #got == 0 then break end
    for i = 1, #got, 2 do
      if #out < 2 * (limit + 1) and (tonumber(got[i + 1]) > score or sorts_before(ARGV[3], got[i])) then
        out[#out + 1] = got[i]
        out[#out + 1] = got[i + 1]
      end
    end
    offset = offset + #got / 2
  end
  return out
end

local ids = page()
local n = math.min(#ids / 2, limit)
local out = { #ids / 2 > limit and 1 or 0 }
for i = 1, 2 * n, 2 do
  local id = ids[i]
  local rec = redis.call('HGET', items, id)
  local r = parse(rec)
  out[#out + 1] = id
  if r then
    out[#out + 1] = r.value
    out[#out + 1] = r.deadline
    out[#out + 1] = r.attempt
  else
    out[#out + 1] = rec or false
    out[#out + 1] = false
    out[#out + 1] = 0
  end
  out[#out + 1] = redis.call('HGET', reasons, id) or false
  out[#out + 1] = ids[i + 1]
end
return out
