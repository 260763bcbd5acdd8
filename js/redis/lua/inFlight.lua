--[[ inFlight: a page of the items handed out and not yet acked, by lease expiry (ties by id),
  from the first or after a cursor (the lease expiry and id of the last item of the page
  before; if that item is gone, the page starts where it stood). O(log n + limit).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: limit, then the cursor's lease expiry and id ('' and '' for the first page)
  Reply: 1 if more follow the page (else 0), then per item: id, lease expiry, value, deadline,
    attempt, schedule (an occurrence's, else false)
]]
--- @include "record"
--- @include "page"

local limit = tonumber(ARGV[1])
local from = rank_after(leased, ARGV[2], ARGV[3])
local ids = redis.call('ZRANGE', leased, from, from + limit, 'WITHSCORES')
local out = { #ids / 2 > limit and 1 or 0 }
for i = 1, math.min(#ids, 2 * limit), 2 do
  local r = parse(redis.call('HGET', items, ids[i]))
  if r and r.state == 'l' then page_row(out, ids[i], ids[i + 1], r) end
end
return out
