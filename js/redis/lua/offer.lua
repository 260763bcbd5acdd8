--[[ offer: adds items, each due after a delay from the call or at a deadline, in order (a
  later item meets what an earlier one left). For an id already present, the item's mode says
  what happens: 'r' replace it, whatever its state (a new pending item, attempts from 0); 'k'
  keep it as it is; 'e' extend: a pending item takes the later of the two deadlines (moved
  behind the items already due then, if it moves) and the new value, its attempts kept; an
  item in flight or dead is replaced.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, stamp, tolerance, then per item: id, mode ('r', 'k' or 'e'), kind ('d' a
    delay from the stamp, 'a' an absolute deadline), ms, value
  Reply: now, head, 1 if the sequence counter was found gone while records remained (Redis
    lost a key of the queue)
]]
--- @include "time"
--- @include "queue"

local now = clock()
local from = start(now, ARGV[2], tonumber(ARGV[3]))
local before = head()
local first -- the earliest deadline offered
local seq = seqs((#ARGV - 3) / 5)
for i = 4, #ARGV, 5 do
  local id, mode, ms, value = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 3]), ARGV[i + 4]
  local deadline = fmt(up(ARGV[i + 2] == 'a' and ms or from + ms))
  local old = redis.call('HGET', items, id)
  local r = parse(old)
  if old and mode == 'k' then -- luacheck: ignore 542 (kept: nothing to do)
  elseif r and mode == 'e' and r.state == 'p' then
    r.value = value
    if tonumber(deadline) > tonumber(r.deadline) then
      redis.call('ZREM', pending, r.seq .. id)
      r.seq, r.deadline = hex(seq), deadline
      redis.call('ZADD', pending, deadline, r.seq .. id)
    end
    save(id, r)
  else
    if old then unlink(id, r) end
    local s = hex(seq)
    save(id, { state = 'p', seq = s, deadline = deadline, attempt = 0, token = '', value = value })
    redis.call('ZADD', pending, deadline, s .. id)
    if first == nil or tonumber(deadline) < tonumber(first) then first = deadline end
  end
  seq = seq + 1
end
-- The head is now the earlier of the old one and the first offered (an offer that replaced
-- or extended the old head may have made it later: consumers find that out when they wake).
if first ~= nil and (before == nil or tonumber(first) < tonumber(before)) then
  publish(ARGV[1], first)
  return { fmt(now), first, vanished and 1 or 0 }
end
return { fmt(now), before or false, vanished and 1 or 0 }
