--[[ main: a script that includes two includes, one of which includes the other.
  KEYS: none
  ARGV: none
  Reply: now, then what it read
]]
--- @include "outer"
--- @include "inner"
return { inner(), outer() }
