// A sharded queue (`shards: K`) on one plain redis-server: every path finds an item on the one
// shard its id names, whatever the id holds. An occurrence (`<schedule>@<due>`) lives on its
// schedule's shard, so a schedule whose own id ends in `@digits` (`user@1`, `digest@42`) must
// be found there by get(), retryDead() and deleteDead() alike. And K is one number for every
// process: the first call of any process records it, and a process that opens the queue with
// another K is refused at its first call, naming `shards`, whichever came first.

import { test } from "node:test";
import assert from "node:assert/strict";
import { privateRedis } from "./fixture.mjs";
import { crc16 } from "./crc16.mjs";

const fx = privateRedis("sid");

/** A schedule id `<base>@<n>` whose shard among 3 is not the shard of `<base>` (where a split at its first "@" would look). */
function misleadingId(base) {
  for (let n = 1; ; n++) if (crc16(`${base}@${n}`) % 3 !== crc16(base) % 3) return `${base}@${n}`;
}

test("a schedule id ending in @digits on shards: 3: its dead occurrence is found by get(), retryDead() and deleteDead()", async () => {
  const q = fx.open({ shards: 3, maxAttempts: 1 });
  for (const id of [misleadingId("user"), misleadingId("digest")]) {
    // Its first occurrence comes due in 3 s: well after schedule() has run, however slow.
    const { nextRun } = await q.schedule(id, { every: 3_600_000 }, id, { start: Date.now() - 3_600_000 + 3000 });
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

test("a new queue opened by one process without shards and by another with shards: 3: the one that comes second is refused, naming shards", async () => {
  const name = fx.name();
  // A opens it and makes a call while it is new; then B opens it with 3 shards.
  const a = fx.open({ name });
  assert.equal(await a.size(), 0);
  const b = fx.open({ name, shards: 3 });
  await assert.rejects(b.offer("b", 60_000), /options\.shards is 3, but the queue .* was created with shards: 1/);
  const ids = await Promise.all(Array.from({ length: 31 }, (_, n) => a.offer(n, 60_000)));
  assert.equal(await a.size(), ids.length, "A does not see every item it offered");
  await assert.rejects(b.size(), /options\.shards/);
  // The other way round: B (3 shards) makes the first call; A, opened before, is refused at its first.
  const name2 = fx.name();
  const a2 = fx.open({ name: name2 });
  const b2 = fx.open({ name: name2, shards: 3 });
  await b2.offer("b", 60_000);
  await assert.rejects(a2.offer("a", 60_000), /options\.shards is 1, but the queue .* was created with shards: 3/);
  assert.equal(await b2.size(), 1);
});
