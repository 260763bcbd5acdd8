-- The queue's keys: KEYS[1..9] of every script, in the order js/redis/keys.js gives them,
-- all under one hash tag, so that one Redis Cluster shard holds them and runs the script.
--
--   items    HASH    id -> record (includes/record.lua)
--   pending  ZSET    member seq .. id, score deadline: the items waiting for their deadline,
--                    and the due ones not yet taken. Equal deadlines sort by member, and seq is
--                    16 hex digits from one counter, so ties come out FIFO and never wrap.
--   leased   ZSET    member id, score lease expiry: items handed to a consumer, not yet acked
--   dead     ZSET    member id, score time of death: the dead letters
--   seq      STRING  the counter behind seqs and delivery tokens
--   reasons  HASH    id -> JSON { reason, raw? } for each dead letter
--   meta     HASH    the queue's own state: paused (present while paused), the counts of every
--                    process's deliveries and outcomes, and their lateness histogram
--                    (includes/meta.lua)
--   events   STREAM  capped: each state change, while some process observes (includes/meta.lua)
--   observed STRING  present (with an expiry its observers renew) while some process observes
-- luacheck: push ignore 211 (not every script uses every key)
local items, pending, leased, dead, seqkey, reasons = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local meta, events, observed = KEYS[7], KEYS[8], KEYS[9]
-- luacheck: pop
