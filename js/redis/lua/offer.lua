--[[ offer: adds items, each due after a delay from the call or at a deadline. An id already
  present is replaced, whatever its state.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, stamp, tolerance, then per item: id, kind ('d' a delay from the stamp, 'a' an
    absolute deadline), ms, value
  Reply: now, head
]]
--- @include "time"
--- @include "queue"

local now = clock()
local from = start(now, ARGV[2], tonumber(ARGV[3]))
local before = head()
local first -- the earliest deadline offered
local seq = seqs((#ARGV - 3) / 4)
for i = 4, #ARGV, 4 do
  local id, ms = ARGV[i], tonumber(ARGV[i + 2])
  local old = redis.call('HGET', items, id)
  if old then unlink(id, parse(old)) end
  local deadline = fmt(up(ARGV[i + 1] == 'a' and ms or from + ms))
  local s = hex(seq)
  seq = seq + 1
  save(id, { state = 'p', seq = s, deadline = deadline, attempt = 0, token = '', value = ARGV[i + 3] })
  redis.call('ZADD', pending, deadline, s .. id)
  if first == nil or tonumber(deadline) < tonumber(first) then first = deadline end
end
-- The head is now the earlier of the old one and the first offered (an offer that replaced
-- the old head may have made it later: consumers find that out when they wake).
if before == nil or tonumber(first) < tonumber(before) then
  redis.call('PUBLISH', ARGV[1], first)
  return { fmt(now), first }
end
return { fmt(now), before }
