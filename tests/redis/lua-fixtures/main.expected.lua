--[[ main: a script that includes two includes, one of which includes the other.
  KEYS: none
  ARGV: none
  Reply: now, then what it read
]]
-- inner (includes/inner.lua)
local function inner() return 'in' end

-- end of inner
-- outer (includes/outer.lua)
local function outer() return inner() .. '!' end

-- end of outer
return { inner(), outer() }
