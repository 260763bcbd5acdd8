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
for i = 1, #ARGV, 2 do
  local r = leased_by(ARGV[i], ARGV[i + 1])
  if r then
    redis.call('ZREM', leased, ARGV[i])
    redis.call('HDEL', items, ARGV[i])
    if r.schedule then ended(r.schedule, ARGV[i]) end
    count('acked')
    tell('acked', 'id', ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
