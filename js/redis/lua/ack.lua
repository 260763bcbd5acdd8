--[[ ack: done with deliveries: each item whose delivery still holds its lease is removed.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: per delivery: id, token
  Reply: per delivery 1 when it still held the lease (the item is done and gone: counted in
    meta, told to observers), 0 otherwise (nothing changed)
]]
--- @include "queue"
--- @include "meta"

local out = {}
for i = 1, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    redis.call('ZREM', leased, ARGV[i])
    redis.call('HDEL', items, ARGV[i])
    count('acked')
    tell('acked', 'id', ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
