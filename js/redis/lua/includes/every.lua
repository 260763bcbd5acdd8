-- every: a fixed rate, as js/schedule/rule.js EveryRule and catchUp compute it (the two are
-- compared on random cases by tests/redis/lua.test.mjs). Occurrence k is due at
-- first + k * period; k is found by one remainder (math.fmod, exact), never by a loop, so a
-- script costs the same whatever numbers a record holds. The rule ends at the latest instant
-- every engine holds (nil: no occurrence). Pure: no Redis call.

--- @include "defs"

-- The first occurrence strictly after `after`, or nil past the latest instant.
local function every_next(first, period, after) -- luacheck: ignore 211
  local t = first
  if after >= first then
    local d = after - first
    t = first + (d - math.fmod(d, period)) + period
  end
  if t > LATEST_INSTANT then return nil end
  return t
end

-- The last occurrence at or before `at`, or nil before the first.
local function every_latest(first, period, at) -- luacheck: ignore 211
  if at < first then return nil end
  local d = math.min(at, LATEST_INSTANT) - first
  return first + (d - math.fmod(d, period))
end

-- catchUp: what runs of the occurrence due at `due` that has come, at now, under mode catch
-- ('one', 'all' or 'none'), and the occurrence after it (nil when the rule has none). Behind
-- (the next one is due too): 'all' runs due, 'one' the latest missed occurrence, 'none'
-- nothing.
local function every_catch_up(first, period, catch, due, now) -- luacheck: ignore 211
  local after = every_next(first, period, due)
  if after == nil or after > now or catch == 'all' then return due, after end
  local latest = every_latest(first, period, now)
  if catch == 'one' then return latest, every_next(first, period, latest) end
  return nil, every_next(first, period, latest)
end
