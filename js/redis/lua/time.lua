--[[ time: a reading of the server's clock, for the first stamp of a new connection.
  KEYS: the queue's keys (includes/keys.lua), unused
  ARGV: none
  Reply: now
]]
--- @include "time"

return { fmt(clock()) }
