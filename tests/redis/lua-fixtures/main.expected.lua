--[[ main: a script that includes two includes, one of which includes the other.
  KEYS: none
  ARGV: none
  Reply: now, then what it read
]]
-- outer (includes/outer.lua)
-- inner (includes/inner.lua)
local function inner() return 'in' end

-- end of inner
local function outer() return inner() .. '!' end

-- end of outer
return { inner(), outer() }
