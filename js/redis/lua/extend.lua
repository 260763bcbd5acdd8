--[[ extend: sets each lease still held to expire a number of ms from now.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: ms, then per delivery: id, token
  Reply: now, lease head, then per delivery 1 (extended) or 0 (the lease was not held)
]]
--- @include "time"
--- @include "queue"

local now = clock()
local expiry = fmt(now + tonumber(ARGV[1]))
local out = { fmt(now), false }
for i = 2, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    redis.call('ZADD', leased, 'XX', expiry, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[2] = lease_head() or false
return out
