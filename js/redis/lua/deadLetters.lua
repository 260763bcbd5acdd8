--[[ deadLetters: the oldest dead letters, read from their records.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: limit
  Reply: per dead letter: id, text, deadline, attempt, reason, time of death; where its
    record reads, text is its value, deadline and attempt its own; where it does not, text is
    what the items hash holds (or false), deadline false and attempt 0. reason is the JSON
    { reason, raw? } kept when it died, or false.
]]
--- @include "record"

local out = {}
local ids = redis.call('ZRANGE', dead, 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
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
