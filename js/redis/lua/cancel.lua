--[[ cancel: removes a pending item.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: 1 if the item was pending (it is gone now), else 0
]]
--- @include "record"

local r = parse(redis.call('HGET', items, ARGV[1]))
if r == nil or r.state ~= 'p' then return 0 end
redis.call('ZREM', pending, r.seq .. ARGV[1])
redis.call('HDEL', items, ARGV[1])
return 1
