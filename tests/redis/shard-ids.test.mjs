// A sharded queue (`shards: K`) on one plain redis-server: every path finds an item on the one
// shard its id names, whatever the id holds. An occurrence (`<schedule>@<due>`) lives on its
// schedule's shard, so a schedule whose own id ends in `@digits` (`user@1`, `digest@42`) must
// be found there by get(), retryDead() and deleteDead() alike.

import { test } from "node:test";
import assert from "node:assert/strict";
import { privateRedis } from "./fixture.mjs";

const fx = privateRedis("sid");

/** CRC16-CCITT (XMODEM) of a string's UTF-8 bytes, bit by bit (Redis Cluster's key hash). */
function crc16(s) {
  let crc = 0;
  for (const byte of new TextEncoder().encode(s)) {
    crc ^= byte << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** A schedule id `<base>@<n>` whose shard among 3 is not the shard of `<base>` (where a split at its first "@" would look). */
function misleadingId(base) {
  for (let n = 1; ; n++) if (crc16(`${base}@${n}`) % 3 !== crc16(base) % 3) return `${base}@${n}`;
}

test("a schedule id ending in @digits on shards: 3: its dead occurrence is found by get(), retryDead() and deleteDead()", async () => {
  const q = fx.open({ shards: 3, maxAttempts: 1 });
  for (const id of [misleadingId("user"), misleadingId("digest")]) {
    const { nextRun } = await q.schedule(id, { every: 3_600_000 }, id, { start: Date.now() - 3_600_000 + 50 });
    const job = await q.take({ timeout: 10_000 });
    assert.ok(job, `the occurrence of ${id} was not handed out`);
    assert.equal(job.id, `${id}@${nextRun}`);
    assert.equal(job.schedule, id);
    await job.nack({ reason: "boom" });
    const dead = await q.get(job.id);
    assert.equal(dead?.state, "dead", `get(${job.id}) missed the dead occurrence`);
    assert.equal(await q.retryDead(job.id), true, `retryDead(${job.id}) missed it`);
    const again = await q.take({ timeout: 10_000 });
    assert.equal(again?.id, job.id);
    await again.nack({ reason: "boom" });
    assert.equal(await q.deleteDead(job.id), true, `deleteDead(${job.id}) missed it`);
    assert.equal(await q.get(job.id), undefined);
    assert.equal(await q.unschedule(id), true, `unschedule(${id}) missed the schedule`);
  }
  assert.deepEqual(await q.schedules(), []);
});
