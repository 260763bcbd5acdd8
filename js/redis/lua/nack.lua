--[[ nack: not done: the item comes back after a delay from the call, or goes to the dead
  letters if this was its last attempt.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, stamp, tolerance, id, token, delay (ms), maxAttempts, reason, stack ('' for none:
    kept beside the reason when the item dies)
  Reply: now, outcome (0 the lease was not held, 1 back in the queue, 2 dead-lettered; counted
    in meta and told to observers), head, 1 if the sequence counter was found gone while
    records remained
  The dead-lettering of a schedule's run lets the occurrence that waits for it go
  (includes/schedule.lua).
]]
--- @include "time"
--- @include "queue"
--- @include "meta"
--- @include "schedule"

local now = clock()
local id = ARGV[4]
local r = leased_by(id, ARGV[5])
if r == nil then return { fmt(now), 0, head() or false } end
redis.call('ZREM', leased, id)
if r.attempt >= tonumber(ARGV[7]) then
  bury(id, r, now, ARGV[8], nil, ARGV[9])
  if r.schedule then ended(r.schedule, id) end -- its run ended: an occurrence waiting for it goes
  count('dead')
  tell('dead', 'id', id, 'reason', ARGV[8])
  return { fmt(now), 2, head() or false }
end
local before = head()
local deadline = up(start(now, ARGV[2], tonumber(ARGV[3])) + tonumber(ARGV[6]))
enqueue(id, r, fmt(deadline))
count('nacked')
tell('nacked', 'id', id, 'attempt', r.attempt, 'delayMs', fmt(math.max(0, deadline - now)), 'reason', ARGV[8])
return { fmt(now), 1, announce(ARGV[1], before) or false, vanished and 1 or 0 }
