--[[ purgeDead: removes up to limit dead letters that died at or before a cutoff: the one given,
  or, for the first run of a purge, now minus olderThan.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: olderThan (ms), cutoff ('' for the first run), limit
  Reply: the cutoff, the number removed, 1 if more may be left (else 0)
]]
--- @include "keys"
--- @include "time"

local cutoff = ARGV[2]
if cutoff == '' then cutoff = fmt(clock() - tonumber(ARGV[1])) end
local limit = tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', dead, '-inf', cutoff, 'LIMIT', 0, limit)
for _, id in ipairs(ids) do
  redis.call('ZREM', dead, id)
  redis.call('HDEL', items, id)
  redis.call('HDEL', reasons, id)
end
return { cutoff, #ids, #ids == limit and 1 or 0 }
