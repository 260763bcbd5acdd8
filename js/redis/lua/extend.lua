--[[ extend: sets each lease still held to expire a number of ms from now; with 'GT', only
  where that is later than it expires already (so that a lease extended further stays so).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: ms, mode ('GT' or 'SET'), then per delivery: id, token
  Reply: now, lease head, then per delivery 1 (it holds the lease) or 0 (it did not)
]]
--- @include "time"
--- @include "queue"

local now = clock()
local expiry = fmt(now + tonumber(ARGV[1]))
local out = { fmt(now), false }
for i = 3, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    if ARGV[2] == 'GT' then
      redis.call('ZADD', leased, 'XX', 'GT', expiry, ARGV[i])
    else
      redis.call('ZADD', leased, 'XX', expiry, ARGV[i])
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[2] = lease_head() or false
return out
