// Where a sharded queue's items live (js/redis/shards.js): the K hash tags of a queue, chosen
// so that their hash slots (CRC16 mod 16384, as Redis Cluster computes it) fall in K equal
// ranges (on a cluster that splits its slots into contiguous ranges, one per primary, so on
// different primaries), and the shard of each id. Computed from the name, K and the id alone,
// so every process agrees without asking Redis.
//
// - Shard i's tag is the queue's name plus the shortest suffix ("", then "~0", "~1", ...)
//   whose slot is in [i·16384/K, (i+1)·16384/K). One shard's tag is the name itself.
// - A schedule lives on the shard CRC16(its id) mod K; an item on CRC16(its id) mod K, but an
//   occurrence (an id `<schedule>@<due>`, as js/schedule/spec.js parses it) on its schedule's
//   shard, so a schedule and its occurrences share one.

import { occurrenceOf } from "../schedule/spec.js";

/** Redis Cluster's hash slots. */
const SLOTS = 16384;

/** CRC16-CCITT (XMODEM), Redis Cluster's key hash. */
const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let b = 0; b < 8; b++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
    t[i] = c & 0xffff;
  }
  return t;
})();

const encoder = new TextEncoder();

/**
 * CRC16 of a string's UTF-8 bytes (what Redis hashes).
 * @param {string} s
 */
export function crc16(s) {
  let crc = 0;
  for (const byte of encoder.encode(s)) crc = ((crc << 8) ^ CRC_TABLE[((crc >> 8) ^ byte) & 0xff]) & 0xffff;
  return crc;
}

/**
 * The hash slot of a hash tag.
 * @param {string} tag
 */
export const slotOf = (tag) => crc16(tag) % SLOTS;

/**
 * The tags of the K shards of the queue `name`, shard i's slot in [i·16384/K, (i+1)·16384/K).
 * @param {string} name
 * @param {number} k
 * @returns {string[]}
 */
export function shardTags(name, k) {
  const tags = [];
  for (let i = 0; i < k; i++) {
    const lo = Math.floor((i * SLOTS) / k);
    const hi = Math.floor(((i + 1) * SLOTS) / k);
    for (let n = -1; ; n++) {
      const tag = n < 0 ? name : `${name}~${n}`;
      const slot = slotOf(tag);
      if (slot >= lo && slot < hi) {
        tags.push(tag);
        break;
      }
    }
  }
  return tags;
}

/**
 * The shard of the schedule `id` among K.
 * @param {string} id
 * @param {number} k
 */
export const scheduleShardOf = (id, k) => crc16(id) % k;

/**
 * The shard of the item `id` among K: an occurrence's is its schedule's.
 * @param {string} id
 * @param {number} k
 */
export function shardOf(id, k) {
  return scheduleShardOf(occurrenceOf(id)?.schedule ?? id, k);
}
