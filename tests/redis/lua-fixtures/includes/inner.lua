local function inner() return 'in' end
