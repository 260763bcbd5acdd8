--[[ pause: stops deliveries: the take script hands nothing out while the queue is paused;
  offers still land. Every consumer hears it on the channel at once.
  KEYS: the queue's keys (includes/keys.lua)
  ARGV: channel
  Reply: 1 if it was running (else 0)
]]
--- @include "meta"

if paused() then return 0 end
redis.call('HSET', meta, 'paused', '1')
redis.call('PUBLISH', ARGV[1], 'paused')
tell('paused')
return 1
