--[[ get: what the queue holds under an id.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: id
  Reply: false when nothing is there; else state ('p', 'l', 'd' or 'x' for a record that does
    not read), value (or the raw record), deadline, attempt, lease expiry (leased, else false),
    time of death (dead, else false), reason JSON (dead, else false), schedule (an
    occurrence's, else false)
]]
--- @include "record"

local id = ARGV[1]
local rec = redis.call('HGET', items, id)
if not rec then return false end
local r = parse(rec)
if r == nil then
  local died = redis.call('ZSCORE', dead, id) or false
  return { 'x', rec, false, 0, false, died, redis.call('HGET', reasons, id) or false }
end
local lease, died, reason = false, false, false
if r.state == 'l' then lease = redis.call('ZSCORE', leased, id) or false end
if r.state == 'd' then
  died = redis.call('ZSCORE', dead, id) or false
  reason = redis.call('HGET', reasons, id) or false
end
return { r.state, r.value, r.deadline, r.attempt, lease, died, reason, r.schedule or false }
