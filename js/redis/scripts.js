// The Lua scripts of tarry-queue/redis: every change of a queue's state is one of them, so
// each runs atomically on the server, decides time with the server's TIME, and touches only
// the queue's own keys (all under one hash tag, so one Redis Cluster shard runs it).
//
// Keys (KEYS[1..6] of every script, built by keysOf() in js/redis.js):
//   items    HASH  id -> record (below)
//   pending  ZSET  member seq .. id, score deadline: the items waiting for their deadline,
//                  and the due ones not yet taken. Equal deadlines sort by member, and seq is
//                  16 hex digits from one counter, so ties come out FIFO and never wrap.
//   leased   ZSET  member id, score lease expiry: items handed to a consumer, not yet acked
//   dead     ZSET  member id, score time of death: the dead letters
//   seq      STRING the counter behind seqs and delivery tokens
//   reasons  HASH  id -> JSON { reason, raw? } for each dead letter
//
// A record is  state seq '|' deadline '|' attempt '|' token '|' value
// with state p (pending), l (leased) or d (dead); seq the 16 hex digits of its pending member;
// deadline epoch ms with up to 3 decimals; attempt the number of deliveries so far; token the
// current delivery's token (empty unless leased); value the JSON text as offered.
//
// Times are epoch milliseconds (TIME in ms, microsecond resolution). A deadline is rounded up
// to the microsecond, so rounding never makes an item early. Scripts return times as strings:
// Redis would truncate a Lua number to an integer.

const PRELUDE = `
local items, pending, leased, dead, seqkey, reasons = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local function fmt(ms) return string.format('%.3f', ms) end
local function hex(n) return string.format('%016x', n) end
local function up(ms) return math.ceil(ms * 1000) / 1000 end

local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

-- When a delay starts: the client's stamp (an upper bound of the server time at the call,
-- learned from replies), kept within [now - tolerance, now]. An empty stamp means "now".
local function start(now, stamp, tolerance)
  local s = tonumber(stamp)
  if s == nil or s > now then return now end
  if s < now - tolerance then return now - tolerance end
  return s
end

-- The first seq of n new ones (seqs and tokens share the counter: both only need to be unique
-- and increasing).
local function seqs(n) return redis.call('INCRBY', seqkey, n) - n + 1 end

local function parse(rec)
  if not rec then return nil end
  local state, seq, deadline, attempt, token, at =
    string.match(rec, '^([pld])(%x+)|([^|]+)|(%d+)|(%d*)|()')
  if state == nil or #seq ~= 16 or tonumber(deadline) == nil then return nil end
  return { state = state, seq = seq, deadline = deadline, attempt = tonumber(attempt), token = token,
    value = string.sub(rec, at) }
end

local function save(id, r)
  redis.call('HSET', items, id,
    r.state .. r.seq .. '|' .. r.deadline .. '|' .. string.format('%d', r.attempt) .. '|' .. r.token .. '|' .. r.value)
end

local function head()
  return redis.call('ZRANGE', pending, 0, 0, 'WITHSCORES')[2]
end

local function lease_head()
  return redis.call('ZRANGE', leased, 0, 0, 'WITHSCORES')[2]
end

-- Tells the consumers when the head became earlier than 'before' (Redisson's rule: they
-- re-arm their one timer on this message). Returns the head's deadline.
local function announce(channel, before)
  local after = head()
  if after and (before == nil or tonumber(after) < tonumber(before)) then
    redis.call('PUBLISH', channel, after)
  end
  return after
end

-- Puts r back to wait for its deadline, behind the items already waiting at that deadline.
local function enqueue(id, r, deadline)
  r.state, r.seq, r.deadline, r.token = 'p', hex(seqs(1)), deadline, ''
  save(id, r)
  redis.call('ZADD', pending, deadline, r.seq .. id)
end

-- Takes id out of whatever set holds it (its record stays).
local function unlink(id, r)
  if r == nil then
    redis.call('ZREM', leased, id)
    redis.call('ZREM', dead, id)
    redis.call('HDEL', reasons, id)
  elseif r.state == 'p' then
    redis.call('ZREM', pending, r.seq .. id)
  elseif r.state == 'l' then
    redis.call('ZREM', leased, id)
  else
    redis.call('ZREM', dead, id)
    redis.call('HDEL', reasons, id)
  end
end

-- Moves id to the dead letters. r is nil for a record that could not be read: what was there
-- is kept as raw text beside the reason.
local function bury(id, r, now, reason, raw)
  if r == nil then
    r = { seq = hex(0), deadline = fmt(now), attempt = 0, value = 'null' }
  end
  r.state, r.token = 'd', ''
  save(id, r)
  redis.call('ZADD', dead, fmt(now), id)
  redis.call('HSET', reasons, id, cjson.encode({ reason = reason, raw = raw }))
end

local function leased_by(id, token)
  local r = parse(redis.call('HGET', items, id))
  if r and r.state == 'l' and r.token == token then return r end
  return nil
end
`;

/** The scripts by name: source text; js/redis.js runs them by SHA and loads them on NOSCRIPT. */
export const SCRIPTS = {
  /** A clock reading: { now }. */
  time: `return { fmt(clock()) }`,

  /**
   * ARGV: channel, stamp, tolerance, then per item: id, kind ('d' delay from the stamp,
   * 'a' absolute deadline), ms, value. An id already present is replaced, whatever its state.
   * Returns { now, head }.
   */
  offer: `
local now = clock()
local from = start(now, ARGV[2], tonumber(ARGV[3]))
local before = head()
local first -- the earliest deadline offered
local seq = seqs((#ARGV - 3) / 4)
for i = 4, #ARGV, 4 do
  local id, ms = ARGV[i], tonumber(ARGV[i + 2])
  local old = redis.call('HGET', items, id)
  if old then unlink(id, parse(old)) end
  local deadline = fmt(up(ARGV[i + 1] == 'a' and ms or from + ms))
  local s = hex(seq)
  seq = seq + 1
  redis.call('HSET', items, id, 'p' .. s .. '|' .. deadline .. '|0||' .. ARGV[i + 3])
  redis.call('ZADD', pending, deadline, s .. id)
  if first == nil or tonumber(deadline) < tonumber(first) then first = deadline end
end
-- The head is now the earlier of the old one and the first offered (an offer that replaced
-- the old head may have made it later: consumers find that out when they wake).
if before == nil or tonumber(first) < tonumber(before) then
  redis.call('PUBLISH', ARGV[1], first)
  return { fmt(now), first }
end
return { fmt(now), before }`,

  /**
   * The consumer's one script. ARGV: channel, count, visibility ms, maxAttempts, reclaim limit.
   * First the lease expiry: leases that ran out go back, due now, or to the dead letters after
   * maxAttempts. Then the transfer: up to count due items, in deadline order, leased to the
   * caller. Returns { now, head, lease head, then id, value, deadline, attempt, token per item }.
   */
  take: `
local now = clock()
local nows = fmt(now)
local max_attempts = tonumber(ARGV[4])
local expired = redis.call('ZRANGEBYSCORE', leased, '-inf', nows, 'LIMIT', 0, tonumber(ARGV[5]))
local before = #expired > 0 and head()
for _, id in ipairs(expired) do
  redis.call('ZREM', leased, id)
  local raw = redis.call('HGET', items, id)
  local r = parse(raw)
  if r == nil then
    bury(id, nil, now, 'malformed record', raw)
  elseif r.attempt >= max_attempts then
    bury(id, r, now, 'lease expired on attempt ' .. r.attempt .. ' of ' .. max_attempts)
  else
    enqueue(id, r, nows)
  end
end
if #expired > 0 then announce(ARGV[1], before or nil) end

local out = { nows, false, false }
local count = tonumber(ARGV[2])
if count > 0 then
  local due = redis.call('ZRANGEBYSCORE', pending, '-inf', nows, 'LIMIT', 0, count)
  if #due > 0 then
    redis.call('ZREMRANGEBYRANK', pending, 0, #due - 1)
    local expiry = fmt(now + tonumber(ARGV[3]))
    local token = seqs(#due)
    for _, member in ipairs(due) do
      local s, id = string.sub(member, 1, 16), string.sub(member, 17)
      if id == '' or not string.match(s, '^%x+$') then
        -- Not written by tarry: keep it as a dead letter under its own name, unless that
        -- name is a live item's id.
        if redis.call('HEXISTS', items, member) == 0 then
          bury(member, nil, now, 'malformed pending entry', member)
        end
      else
        local raw = redis.call('HGET', items, id)
        local r = parse(raw)
        if r == nil then
          bury(id, nil, now, raw and 'malformed record' or 'pending entry without a record', raw or member)
        elseif r.state == 'p' and r.seq == s then
          r.state, r.attempt, r.token = 'l', r.attempt + 1, string.format('%d', token)
          token = token + 1
          save(id, r)
          redis.call('ZADD', leased, expiry, id)
          out[#out + 1] = id
          out[#out + 1] = r.value
          out[#out + 1] = r.deadline
          out[#out + 1] = r.attempt
          out[#out + 1] = r.token
        end
        -- else: a member left behind by a replaced record; it is gone now.
      end
    end
  end
end
out[2] = head() or false
out[3] = lease_head() or false
return out`,

  /**
   * ARGV: id, token per delivery. Returns per delivery 1 when it still held the lease (the
   * item is done and gone), 0 otherwise (changes nothing).
   */
  ack: `
local out = {}
for i = 1, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    redis.call('ZREM', leased, ARGV[i])
    redis.call('HDEL', items, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out`,

  /**
   * ARGV: channel, stamp, tolerance, id, token, delay ms, maxAttempts, reason.
   * Returns { now, 0 (not held) | 1 (back in the queue) | 2 (dead-lettered), head }.
   */
  nack: `
local now = clock()
local id = ARGV[4]
local r = leased_by(id, ARGV[5])
if r == nil then return { fmt(now), 0, head() or false } end
redis.call('ZREM', leased, id)
if r.attempt >= tonumber(ARGV[7]) then
  bury(id, r, now, ARGV[8])
  return { fmt(now), 2, head() or false }
end
local before = head()
enqueue(id, r, fmt(up(start(now, ARGV[2], tonumber(ARGV[3])) + tonumber(ARGV[6]))))
return { fmt(now), 1, announce(ARGV[1], before) or false }`,

  /**
   * ARGV: ms, then id, token per delivery. Sets each held lease to expire ms from now.
   * Returns { now, lease head, then 1 or 0 per delivery }.
   */
  extend: `
local now = clock()
local expiry = fmt(now + tonumber(ARGV[1]))
local out = { fmt(now), false }
for i = 2, #ARGV, 2 do
  if leased_by(ARGV[i], ARGV[i + 1]) then
    redis.call('ZADD', leased, 'XX', expiry, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[2] = lease_head() or false
return out`,

  /**
   * ARGV: channel, id, token. Undoes a delivery that no taker received (it left before the
   * reply came): the item goes back to its place, its attempt not counted. Returns { head }.
   */
  release: `
local r = leased_by(ARGV[2], ARGV[3])
if r == nil then return { head() or false } end
local before = head()
redis.call('ZREM', leased, ARGV[2])
r.state, r.attempt, r.token = 'p', r.attempt - 1, ''
save(ARGV[2], r)
redis.call('ZADD', pending, r.deadline, r.seq .. ARGV[2])
return { announce(ARGV[1], before) or false }`,

  /** ARGV: id, token, reason. Dead-letters a delivery whose value the client cannot read. */
  bury: `
local r = leased_by(ARGV[1], ARGV[2])
if r == nil then return 0 end
redis.call('ZREM', leased, ARGV[1])
bury(ARGV[1], r, clock(), ARGV[3], r.value)
return 1`,

  /** ARGV: id. Returns 1 if the item was pending (it is gone now). */
  cancel: `
local r = parse(redis.call('HGET', items, ARGV[1]))
if r == nil or r.state ~= 'p' then return 0 end
redis.call('ZREM', pending, r.seq .. ARGV[1])
redis.call('HDEL', items, ARGV[1])
return 1`,

  /** ARGV: channel, stamp, tolerance, id, kind, ms. Returns { now, 1 if it was pending, head }. */
  reschedule: `
local now = clock()
local id = ARGV[4]
local r = parse(redis.call('HGET', items, id))
if r == nil or r.state ~= 'p' then return { fmt(now), 0, head() or false } end
local before = head()
redis.call('ZREM', pending, r.seq .. id)
local ms = tonumber(ARGV[6])
enqueue(id, r, fmt(up(ARGV[5] == 'a' and ms or start(now, ARGV[2], tonumber(ARGV[3])) + ms)))
return { fmt(now), 1, announce(ARGV[1], before) or false }`,

  /** ARGV: id. Returns { now, deadline } for a pending item, { now } otherwise. */
  delayOf: `
local r = parse(redis.call('HGET', items, ARGV[1]))
if r == nil or r.state ~= 'p' then return { fmt(clock()) } end
return { fmt(clock()), r.deadline }`,

  /** Returns { now, pending, in flight, dead, head, lease head }. */
  stats: `
return { fmt(clock()), redis.call('ZCARD', pending), redis.call('ZCARD', leased), redis.call('ZCARD', dead),
  head() or false, lease_head() or false }`,

  /** ARGV: limit. Returns id, record, reason, time of death for the oldest dead letters. */
  deadLetters: `
local out = {}
local ids = redis.call('ZRANGE', dead, 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
  local id = ids[i]
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', items, id) or false
  out[#out + 1] = redis.call('HGET', reasons, id) or false
  out[#out + 1] = ids[i + 1]
end
return out`,

  /** ARGV: channel, id. A dead letter goes back, due now, with its attempts reset. Returns { 0|1, head }. */
  retryDead: `
local now = clock()
local r = parse(redis.call('HGET', items, ARGV[2]))
if r == nil or r.state ~= 'd' then return { 0, head() or false } end
local before = head()
redis.call('ZREM', dead, ARGV[2])
redis.call('HDEL', reasons, ARGV[2])
r.attempt = 0
enqueue(ARGV[2], r, fmt(now))
return { 1, announce(ARGV[1], before) or false }`,

  /** Removes every item of the queue: pending, in flight and dead. */
  clear: `
return redis.call('DEL', items, pending, leased, dead, reasons)`,
};

/** Each script's full source: the shared functions, then its body. */
export const SOURCES = Object.fromEntries(Object.entries(SCRIPTS).map(([name, body]) => [name, PRELUDE + body]));
