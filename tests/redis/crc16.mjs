// Redis Cluster's key hash, computed here on its own (not taken from js/redis/shards.js), so
// that the shard tests check the engine's placement against the documented rule.

/** CRC16-CCITT (XMODEM) of a string's UTF-8 bytes, bit by bit (Redis Cluster's key hash). */
export function crc16(s) {
  let crc = 0;
  for (const byte of new TextEncoder().encode(s)) {
    crc ^= byte << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
