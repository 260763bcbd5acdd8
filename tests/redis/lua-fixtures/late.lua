--- @include "inner"
return 1
--- @include "outer"
