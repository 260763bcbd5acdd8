-- The record of an item, the value of its id in the items hash; the one place that reads or
-- writes one (JS sees records only through the scripts' replies):
--
--   state seq '|' deadline '|' attempt '|' token '|' [ '@' length ':' schedule ] value
--
-- state p (pending), l (leased) or d (dead); seq its pending member's 16 hex digits, stored
-- without leading zeros (a record written with all 16 reads the same; every caller sees 16);
-- deadline epoch ms with up to 3 decimals; attempt the number of deliveries so far; token the
-- current delivery's token (empty unless leased: hex digits and dashes, made by the take
-- script from a random part its caller sends, so that no token comes twice, even after the
-- counter starts again); schedule, for an occurrence of a schedule (includes/schedule.lua),
-- that schedule's id (length bytes; JSON text never starts with @); value the JSON text as
-- offered.

--- @include "keys"

local function hex(n) return string.format('%016x', n) end -- luacheck: ignore 211

-- Whether this run found the counter gone while items remain: Redis lost or evicted a key
-- of the queue. The script's reply says so (its caller reports it).
local vanished = false -- luacheck: ignore 231
fresh[#fresh + 1] = function() vanished = false end

-- The first seq of n new ones (unique and increasing: FIFO ties). A counter found gone while
-- items remain (pending, leased or dead) resumes above every pending member's seq (once, O(pending)), so that new
-- items still sort behind those already waiting at the same deadline.
local function seqs(n) -- luacheck: ignore 211
  local last = redis.call('INCRBY', seqkey, n)
  if last == n and redis.call('ZCARD', pending) + redis.call('ZCARD', leased) + redis.call('ZCARD', dead) > 0 then
    vanished = true
    local top = 0
    for _, member in ipairs(redis.call('ZRANGE', pending, 0, -1)) do
      local s = tonumber(string.sub(member, 1, 16), 16)
      if s and s > top then top = s end
    end
    last = redis.call('INCRBY', seqkey, top)
  end
  return last - n + 1
end

-- The record as a table { state, seq, deadline, attempt, token, schedule, value } (schedule
-- nil but for an occurrence), or nil when rec is nil or not a record.
local function parse(rec) -- luacheck: ignore 211
  if not rec then return nil end
  local state, seq, deadline, attempt, token, at =
    string.match(rec, '^([pld])(%x+)|([^|]+)|(%d+)|([%x%-]*)|()')
  if state == nil or #seq > 16 or tonumber(deadline) == nil then return nil end
  seq = string.rep('0', 16 - #seq) .. seq
  local schedule
  local length, from = string.match(rec, '^@(%d+):()', at)
  if length then
    schedule = string.sub(rec, from, from + tonumber(length) - 1)
    at = from + tonumber(length)
  end
  return { state = state, seq = seq, deadline = deadline, attempt = tonumber(attempt), token = token,
    schedule = schedule, value = string.sub(rec, at) }
end

local function save(id, r) -- luacheck: ignore 211
  local schedule = r.schedule and ('@' .. #r.schedule .. ':' .. r.schedule) or ''
  local seq = string.match(r.seq, '^0*(%x.*)$') -- without its leading zeros: bytes per item
  redis.call('HSET', items, id, r.state .. seq .. '|' .. r.deadline .. '|' .. string.format('%d', r.attempt) .. '|'
    .. r.token .. '|' .. schedule .. r.value)
end
