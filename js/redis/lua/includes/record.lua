-- The record of an item, the value of its id in the items hash; the one place that reads or
-- writes one (JS sees records only through the scripts' replies):
--
--   state seq '|' deadline '|' attempt '|' token '|' value
--
-- state p (pending), l (leased) or d (dead); seq the 16 hex digits of its pending member;
-- deadline epoch ms with up to 3 decimals; attempt the number of deliveries so far; token the
-- current delivery's token (empty unless leased); value the JSON text as offered.

--- @include "keys"

local function hex(n) return string.format('%016x', n) end -- luacheck: ignore 211

-- The first seq of n new ones (seqs and tokens share the counter: both only need to be unique
-- and increasing).
local function seqs(n) return redis.call('INCRBY', seqkey, n) - n + 1 end -- luacheck: ignore 211

-- The record as a table { state, seq, deadline, attempt, token, value }, or nil when rec is
-- nil or not a record.
local function parse(rec) -- luacheck: ignore 211
  if not rec then return nil end
  local state, seq, deadline, attempt, token, at =
    string.match(rec, '^([pld])(%x+)|([^|]+)|(%d+)|(%d*)|()')
  if state == nil or #seq ~= 16 or tonumber(deadline) == nil then return nil end
  return { state = state, seq = seq, deadline = deadline, attempt = tonumber(attempt), token = token,
    value = string.sub(rec, at) }
end

local function save(id, r) -- luacheck: ignore 211
  redis.call('HSET', items, id,
    r.state .. r.seq .. '|' .. r.deadline .. '|' .. string.format('%d', r.attempt) .. '|' .. r.token .. '|' .. r.value)
end
