--[[ delayOf: the deadline of a pending item.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: now, then the deadline if the item is pending
]]
--- @include "time"
--- @include "record"

local r = parse(redis.call('HGET', items, ARGV[1]))
if r == nil or r.state ~= 'p' then return { fmt(clock()) } end
return { fmt(clock()), r.deadline }
