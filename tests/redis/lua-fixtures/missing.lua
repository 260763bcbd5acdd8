return 1
--- @include "nowhere"
