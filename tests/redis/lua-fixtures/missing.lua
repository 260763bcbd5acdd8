-- A script whose include does not exist.
--- @include "nowhere"
return 1
