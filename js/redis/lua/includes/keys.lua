-- The queue's keys: KEYS[1..10] of every script, in the order js/redis/keys.js gives them,
-- all under one hash tag, so that one Redis Cluster shard holds them and runs the script.
--
--   items    HASH    id -> record (includes/record.lua)
--   pending  ZSET    member seq .. id, score deadline: the items waiting for their deadline,
--                    and the due ones not yet taken. Equal deadlines sort by member, and seq is
--                    16 hex digits from one counter, so ties come out FIFO and never wrap.
--   leased   ZSET    member id, score lease expiry: items handed to a consumer, not yet acked
--   dead     ZSET    member id, score time of death: the dead letters
--   seq      STRING  the counter behind seqs and delivery tokens
--   reasons  HASH    id -> JSON { reason, raw?, stack? } for each dead letter
--   meta     HASH    the queue's own state: paused (present while paused), the counts of every
--                    process's deliveries and outcomes, and their lateness histogram
--                    (includes/meta.lua)
--   events   STREAM  capped: each state change, while some process observes (includes/meta.lua)
--   observed STRING  present (with an expiry its observers renew) while some process observes
--   schedules HASH   schedule id -> its record (includes/schedule.lua)
-- luacheck: push ignore 211 231 (not every script uses every key)
local items, pending, leased, dead, seqkey, reasons = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local meta, events, observed, schedules = KEYS[7], KEYS[8], KEYS[9], KEYS[10]

-- A batch of several queues' calls (the library's '*': js/redis/assemble.js) runs each call
-- on its own queue's keys: bind(k) makes KEYS[10k + 1 .. 10k + 10] the keys, and runs what
-- the includes put in `fresh` to start a call anew (the state one run keeps between calls).
local fresh = {} -- luacheck: ignore 241
local function bind(k) -- luacheck: ignore 211
  local b = 10 * k
  items, pending, leased, dead, seqkey, reasons = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4], KEYS[b + 5],
    KEYS[b + 6]
  meta, events, observed, schedules = KEYS[b + 7], KEYS[b + 8], KEYS[b + 9], KEYS[b + 10]
  for _, f in ipairs(fresh) do f() end
end
-- luacheck: pop
