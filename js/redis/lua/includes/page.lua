-- Pages of a sorted set after a cursor: the score and member of the last entry of the page
-- before. The page starts right after the cursor's entry, or, when that entry is gone, where
-- it stood: after every entry with a lower score, and after those with its score whose member
-- sorts before its member (byte by byte, as a sorted set sorts them). O(log n) to find the
-- start whatever its rank (a binary search over the ranks of the tied entries), then O(limit).

-- Whether string a sorts before b byte by byte.
local function sorts_before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- The rank of the first entry of key after (score, member); 0 when score is ''.
local function rank_after(key, score, member) -- luacheck: ignore 211
  if score == '' then return 0 end
  local at = redis.call('ZSCORE', key, member)
  if at and tonumber(at) == tonumber(score) then return redis.call('ZRANK', key, member) + 1 end
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  local hi = lo + redis.call('ZCOUNT', key, score, score)
  -- Among the ranks lo .. hi - 1 (the entries tied at score, sorted by member), the first
  -- whose member sorts after the cursor's.
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local m = redis.call('ZRANGE', key, mid, mid)[1]
    if sorts_before(member, m) then hi = mid else lo = mid + 1 end
  end
  return lo
end

-- One row of a page of items: id, key (what orders the page: a lease expiry, a seq), then the
-- record's value, deadline, attempt and schedule (an occurrence's, else false). Every page of
-- items builds its rows here (js/redis/scripts.js's pageRows reads them).
local function page_row(out, id, key, r) -- luacheck: ignore 211
  out[#out + 1] = id
  out[#out + 1] = key
  out[#out + 1] = r.value
  out[#out + 1] = r.deadline
  out[#out + 1] = r.attempt
  out[#out + 1] = r.schedule or false
end
