-- Times are epoch milliseconds (TIME in ms, microsecond resolution). A deadline is rounded up
-- to the microsecond, so rounding never makes an item early. Scripts reply with times as
-- strings: Redis would truncate a Lua number to an integer.

local function fmt(ms) return string.format('%.3f', ms) end -- luacheck: ignore 211
local function up(ms) return math.ceil(ms * 1000) / 1000 end -- luacheck: ignore 211

local function clock() -- luacheck: ignore 211
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

-- When a delay starts: the client's stamp (an upper bound of the server time at the call,
-- learned from replies; js/engine/clock.js), kept within [now - tolerance, now]. An empty
-- stamp means "now".
local function start(now, stamp, tolerance) -- luacheck: ignore 211
  local s = tonumber(stamp)
  if s == nil or s > now then return now end
  if s < now - tolerance then return now - tolerance end
  return s
end
