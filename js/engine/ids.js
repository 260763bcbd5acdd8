// Generated ids, for the offers that name none (RedisDelayQueue, DurableDelayQueue): 22
// base64url characters holding 128 random bits from the platform's CSPRNG (more bits than a
// UUID's 122, in 22 characters instead of 36; Redis stores an id twice per item, in its
// record's hash field and its pending entry, so the length is a good part of an item's
// memory). Random bytes are drawn from a pool refilled 256 ids at a time.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BYTES = 16;
let pool = new Uint8Array(0);
let at = 0;

/** A new random id: 22 characters of [A-Za-z0-9_-]. */
export function newId() {
  if (at === pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(BYTES * 256));
    at = 0;
  }
  let out = "";
  const end = at + BYTES - 1; // 15 bytes in groups of 3 (20 characters), then the last one (2)
  for (; at < end; at += 3) {
    const n = (pool[at] << 16) | (pool[at + 1] << 8) | pool[at + 2];
    out += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63] + ALPHABET[n & 63];
  }
  const last = pool[at++];
  return out + ALPHABET[last >> 2] + ALPHABET[(last & 3) << 4];
}
