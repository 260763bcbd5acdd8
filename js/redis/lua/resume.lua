--[[ resume: lets deliveries run again; every consumer hears it on the channel and looks at
  the queue at once.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel
  Reply: 1 if it was paused (else 0)
]]
--- @include "meta"

if not paused() then return 0 end
redis.call('HDEL', meta, 'paused')
redis.call('PUBLISH', ARGV[1], 'resumed')
tell('resumed')
return 1
