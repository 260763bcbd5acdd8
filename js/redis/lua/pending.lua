--[[ pending: a page of pending items in deadline order (FIFO among ties: the pending set sorts
  them by seq), from the first or after a cursor (the deadline and seq of the last item of the
  page before; if that item is gone, the page starts where it stood). O(log n + limit).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: limit, then the cursor's deadline and seq ('' and '' for the first page)
  Reply: 1 if more follow the page (else 0), then per item: id, seq, value, deadline, attempt,
    schedule (an occurrence's, else false)
]]
--- @include "record"
--- @include "page"

local limit = tonumber(ARGV[1])
-- The seq followed by the highest byte sorts after every member of that seq (seq .. id).
local from = rank_after(pending, ARGV[2], ARGV[3] .. '\255')
local members = redis.call('ZRANGE', pending, from, from + limit)
local out = { #members > limit and 1 or 0 }
for i = 1, math.min(#members, limit) do
  local member = members[i]
  local id = string.sub(member, 17)
  local r = parse(redis.call('HGET', items, id))
  if r and r.state == 'p' and r.seq == string.sub(member, 1, 16) then page_row(out, id, r.seq, r) end
  -- else: a member left behind by a replaced or unreadable record (the take script clears
  -- those as it meets them); it is not shown.
end
return out
