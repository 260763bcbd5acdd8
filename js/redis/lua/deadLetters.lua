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
--- @include "page"

local limit = tonumber(ARGV[1])
local from = rank_after(dead, ARGV[2], ARGV[3])
local ids = redis.call('ZRANGE', dead, from, from + limit, 'WITHSCORES')
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
