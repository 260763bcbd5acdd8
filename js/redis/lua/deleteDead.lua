--[[ deleteDead: removes a dead letter.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: 1 if it was dead (it is gone now), else 0
]]
--- @include "keys"

if redis.call('ZREM', dead, ARGV[1]) == 0 then return 0 end
redis.call('HDEL', items, ARGV[1])
redis.call('HDEL', reasons, ARGV[1])
return 1
