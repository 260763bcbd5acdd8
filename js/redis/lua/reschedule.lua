--[[ reschedule: a new deadline for a pending item, behind the items already due then.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, stamp, tolerance, id, kind ('d' a delay from the stamp, 'a' an absolute
    deadline), ms
  Reply: now, 1 if the item was pending (else 0; also for a schedule's pending occurrence, which
    follows its schedule), head, 1 if the sequence counter was found gone while records remained
]]
--- @include "time"
--- @include "queue"
--- @include "schedule"

local now = clock()
local id = ARGV[4]
local r = parse(redis.call('HGET', items, id))
if r == nil or r.state ~= 'p' or is_chain(id, r) then return { fmt(now), 0, head() or false } end
local before = head()
redis.call('ZREM', pending, r.seq .. id)
local ms = tonumber(ARGV[6])
enqueue(id, r, fmt(up(ARGV[5] == 'a' and ms or start(now, ARGV[2], tonumber(ARGV[3])) + ms)))
return { fmt(now), 1, announce(ARGV[1], before) or false, vanished and 1 or 0 }
