-- What a queue keeps about itself beside its items: whether it is paused, the counts of every
-- process's deliveries and outcomes with their lateness, and the events of observers.
--
--   meta fields: paused ('1' while paused), delivered, acked, nacked, redelivered (leases that
--   expired), dead, released (deliveries undone because no take received them), and l<i>: the
--   deliveries whose lateness fell in bucket i, with the buckets of js/engine/lateness.js (64 of 1/64
--   ms below 1 ms, then 32 per power of two), and lmax, the largest lateness.
--
-- Events go to the capped stream only while the observed key exists, which the processes that
-- observe (observe: true) keep alive: otherwise a change costs one EXISTS, once per script.
-- Each entry is t <type>, then its fields (id, attempt, ...), read by js/redis/observer.js.

--- @include "keys"

local EVENTS_KEPT = 100000

local function count(field, n) -- luacheck: ignore 211
  redis.call('HINCRBY', meta, field, n or 1)
end

local function paused() -- luacheck: ignore 211
  return redis.call('HEXISTS', meta, 'paused') == 1
end

-- The bucket of a lateness (ms >= 0), as js/engine/lateness.js computes it.
local function bucket(ms)
  if ms < 1 then return math.floor(ms * 64) end
  local m, e = math.frexp(ms) -- ms = m * 2^e, 0.5 <= m < 1
  local octave = e - 1
  local sub = math.floor((m * 2 - 1) * 32)
  if sub > 31 then sub = 31 end
  if octave > 31 then return 64 + 32 * 32 - 1 end
  return 64 + octave * 32 + sub
end

-- Records the latenesses of one run's deliveries (ms, negative counted as 0): one HINCRBY per
-- bucket they fall in, and lmax read once and written at most once, whatever their number.
local function record_latenesses(list) -- luacheck: ignore 211
  if #list == 0 then return end
  local by, top = {}, 0
  for _, ms in ipairs(list) do
    if ms < 0 then ms = 0 end
    local b = bucket(ms)
    by[b] = (by[b] or 0) + 1
    if ms > top then top = ms end
  end
  for b, n in pairs(by) do redis.call('HINCRBY', meta, 'l' .. b, n) end
  local max = tonumber(redis.call('HGET', meta, 'lmax'))
  if max == nil or top > max then redis.call('HSET', meta, 'lmax', string.format('%.3f', top)) end
end

local observing = nil
fresh[#fresh + 1] = function() observing = nil end

-- Appends an event (its type, then field, value, ...) while some process observes.
local function tell(...) -- luacheck: ignore 211
  if observing == nil then observing = redis.call('EXISTS', observed) == 1 end
  if observing then redis.call('XADD', events, 'MAXLEN', '~', EVENTS_KEPT, '*', 't', ...) end
end
