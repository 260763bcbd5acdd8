--[[ ack: done with deliveries: each item whose delivery still holds its lease is removed.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: per delivery: id, token
  Reply: per delivery 1 when it still held the lease (the item is done and gone: counted in
    meta, told to observers), 0 otherwise (nothing changed)
  The ack of a schedule's run lets the occurrence that waits for it go (includes/schedule.lua).
]]
--- @include "queue"
--- @include "meta"
--- @include "schedule"

local out = {}
local done, gone = {}, {} -- the ids removed (in one ZREM and one HDEL), and as a set
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local r = not gone[id] and leased_by(id, ARGV[i + 1])
  if r then
    done[#done + 1] = id
    gone[id] = true
    if r.schedule then ended(r.schedule, id) end
    tell('acked', 'id', id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if #done > 0 then
  redis.call('ZREM', leased, unpack(done))
  redis.call('HDEL', items, unpack(done))
  count('acked', #done)
end
return out
