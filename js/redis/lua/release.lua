--[[ release: undoes a delivery that no take received (it left before the reply came): the
  item goes back to its place, its attempt and its delivery not counted (observers are told).
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel, id, token
  Reply: head
]]
--- @include "queue"
--- @include "meta"

local r = leased_by(ARGV[2], ARGV[3])
if r == nil then return { head() or false } end
local before = head()
redis.call('ZREM', leased, ARGV[2])
r.state, r.attempt, r.token = 'p', r.attempt - 1, ''
save(ARGV[2], r)
redis.call('ZADD', pending, r.deadline, r.seq .. ARGV[2])
count('delivered', -1)
count('released')
tell('released', 'id', ARGV[2])
return { announce(ARGV[1], before) or false }
