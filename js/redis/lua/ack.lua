--[[ ack: done with deliveries: each item whose delivery still holds its lease is removed.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: per delivery: id, token
  Reply: per delivery 1 when it still held the lease (the item is done and gone), 0 otherwise
    (nothing changed)
]]
--- @include "queue"

local out = {}
local done, gone = {}, {} -- the ids removed (in one ZREM and one HDEL), and as a set
for i = 1, #ARGV, 2 do
  if not gone[ARGV[i]] and leased_by(ARGV[i], ARGV[i + 1]) then
    done[#done + 1] = ARGV[i]
    gone[ARGV[i]] = true
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if #done > 0 then
  redis.call('ZREM', leased, unpack(done))
  redis.call('HDEL', items, unpack(done))
end
return out
