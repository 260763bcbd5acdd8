// take() on Postgres: its timeout and AbortSignal, a take that leaves (its item stays), jobs'
// extend(), and the one alarm: never early, by the server's clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { fresh, privatePostgres } from "./fixture.mjs";

const db = privatePostgres();

async function open(opts = {}) {
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("c"), ...opts });
  await q.migrate();
  return q;
}

test("take({ timeout }): undefined once the timeout passes, the item offered meanwhile when it comes due first", async () => {
  const q = await open();
  const t = Date.now();
  assert.equal(await q.take({ timeout: 200 }), undefined);
  assert.ok(Date.now() - t >= 199, `resolved after ${Date.now() - t} ms`);
  const offered = Date.now();
  await q.offer("soon", 100, { id: "soon" });
  const job = await q.take({ timeout: 10_000 });
  assert.equal(job?.id, "soon");
  assert.ok(Date.now() >= offered + 100, "never early");
  assert.equal(await job.ack(), true);
  assert.equal(await job.ack(), false, "acked once");
  await q.close();
});

test("take({ signal }): an abort rejects with its reason and leaves the item queued", async () => {
  const q = await open();
  await q.offer("later", 300, { id: "later" });
  const ac = new AbortController();
  const taking = q.take({ signal: ac.signal });
  setTimeout(() => ac.abort(new Error("stop")), 50);
  await assert.rejects(taking, /stop/);
  assert.equal((await q.get("later")).state, "pending");
  const job = await q.take({ timeout: 5000 });
  assert.equal(job.id, "later");
  await job.ack();
  await q.close();
});

test("extend(): a lease kept longer does not come back; an expired one is redelivered, attempt raised", async () => {
  const q = await open({ visibilityTimeout: 300 });
  await q.offer("x", 0, { id: "x" });
  const first = await q.take();
  assert.equal(await first.extend(2000), true);
  assert.equal(await q.take({ timeout: 600 }), undefined, "extended: not redelivered");
  const lease = (await q.get("x")).leaseExpiry;
  assert.ok(lease > Date.now() + 500, `lease until ${lease - Date.now()} ms from now`);
  const second = await q.take({ timeout: 5000 });
  assert.equal(second.id, "x");
  assert.equal(second.attempt, 2);
  assert.equal(await first.ack(), false, "the first delivery lost its lease");
  assert.equal(await second.ack(), true);
  await q.close();
});

test("for await: jobs in deadline order until close()", async () => {
  const q = await open();
  await q.offerMany([
    { value: 2, delayMs: 60, id: "b" },
    { value: 1, delayMs: 20, id: "a" },
  ]);
  const seen = [];
  for await (const job of q) {
    seen.push(job.id);
    await job.ack();
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen, ["a", "b"]);
  await q.close();
});
