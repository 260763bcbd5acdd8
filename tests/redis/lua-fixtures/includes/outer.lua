--- @include "inner"
local function outer() return inner() .. '!' end
