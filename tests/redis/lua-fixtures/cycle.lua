--- @include "ping"
return 1
