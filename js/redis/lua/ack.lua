--[[ ack: done with deliveries: each item whose delivery still holds its lease is removed.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: per delivery: id, token
  Reply: per delivery 1 when it still held the lease (the item is done and gone), 0 otherwise
    (nothing changed)
]]
--- @include "queue"

local out = {}
for i = 1, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    redis.call('ZREM', leased, ARGV[i])
    redis.call('HDEL', items, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
