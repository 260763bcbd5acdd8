--[[ bury: dead-letters a delivery whose value the client cannot read.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id, token, reason
  Reply: 1 if the delivery held its lease (the item is dead now), else 0
]]
--- @include "time"
--- @include "queue"
--- @include "meta"

local r = leased_by(ARGV[1], ARGV[2])
if r == nil then return 0 end
redis.call('ZREM', leased, ARGV[1])
bury(ARGV[1], r, clock(), ARGV[3], r.value)
count('dead')
tell('dead', 'id', ARGV[1], 'reason', ARGV[3])
return 1
