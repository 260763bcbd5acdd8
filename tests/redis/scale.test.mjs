// tarry-queue/redis draining a burst: a process() worker takes as many due items per take
// script as it has free handler slots, its handlers' acks of one turn go as one script, and
// every guarantee holds meanwhile (each item once, never early, in deadline order, leases
// released by the acks before close() resolves). Scripts are counted with INFO commandstats:
// every script of a queue is one EVALSHA (or the EVAL that loads the library).

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { privateRedis } from "./fixture.mjs";

const fx = privateRedis("s");
const open = fx.open;

/** Scripts Redis ran since the last call (EVAL and EVALSHA), and it resets the counts. */
async function scriptsRun() {
  const info = await fx.raw.info("commandstats");
  await fx.raw.config("RESETSTAT");
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(eval|evalsha):calls=(\d+)/gm)) n += Number(m[2]);
  return n;
}

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function signal() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/** The server's time now, epoch ms. */
async function serverNow() {
  const [s, us] = await fx.raw.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

test("a burst: each take fills every free slot, one ack script per turn, each item once, in order, never early", async () => {
  const N = 800;
  const SLOTS = 8;
  const producer = open();
  const consumer = open({ name: producer.keys.items.match(/\{(.*)\}/)[1] });
  // Due within 40 ms of one another, all passed by the time the worker starts: offered out of order.
  const base = (await serverNow()) + 300;
  const items = Array.from({ length: N }, (_, i) => ({ i, deadline: base + (i % 40) }));
  const shuffled = [...items].sort(() => Math.random() - 0.5);
  await producer.offerMany(shuffled.map(({ i, deadline }) => ({ value: { i, deadline }, deadline, id: `i${i}` })));
  await consumer.stats(); // connected, library loaded
  while ((await serverNow()) < base + 60) await sleep(20);
  await scriptsRun();

  const seen = [];
  let running = 0;
  let most = 0;
  const done = signal();
  const w = consumer.process(
    async (value, job) => {
      running++;
      most = Math.max(most, running);
      seen.push({ ...value, attempt: job.attempt, deadline: job.deadline });
      await null;
      running--;
      if (seen.length === N) done.resolve();
    },
    { concurrency: SLOTS },
  );
  await Promise.race([done.promise, sleep(30_000)]);
  await w.close();
  const scripts = await scriptsRun();

  assert.equal(seen.length, N, "every item delivered");
  assert.equal(new Set(seen.map((s) => s.i)).size, N, "each item once");
  assert.ok(most <= SLOTS, `${most} handlers at once, ${SLOTS} slots`);
  for (let k = 1; k < N; k++) assert.ok(seen[k - 1].deadline <= seen[k].deadline, `out of deadline order at ${k}`);
  assert.ok(
    seen.every((s) => s.attempt === 1),
    "no redelivery",
  );
  // All due at once: a take per SLOTS items and an ack per take, so about N / 4 scripts. A take
  // for the first free slot only, or an ack script per item, makes it N or more.
  assert.ok(scripts <= N / 2.5, `${scripts} scripts for ${N} deliveries with ${SLOTS} slots`);
  // close() resolved after the acks: nothing is left leased.
  const { pending, inFlight } = await consumer.stats();
  assert.deepEqual({ pending, inFlight }, { pending: 0, inFlight: 0 });
  assert.deepEqual(consumer.errors, []);
});

test("several workers share a burst: each item once, none early", async () => {
  const N = 600;
  const producer = open();
  const name = producer.keys.items.match(/\{(.*)\}/)[1];
  const workers = [open({ name }), open({ name }), open({ name })];
  const at = (await serverNow()) + 400;
  await producer.offerMany(Array.from({ length: N }, (_, i) => ({ value: i, deadline: at, id: `b${i}` })));
  const seen = new Map();
  const early = [];
  const done = signal();
  const ws = workers.map((q) =>
    q.process(
      async (value, job) => {
        if ((await serverNow()) < job.deadline) early.push(value);
        seen.set(value, (seen.get(value) ?? 0) + 1);
        if (seen.size === N) done.resolve();
      },
      { concurrency: 4 },
    ),
  );
  await Promise.race([done.promise, sleep(30_000)]);
  await Promise.all(ws.map((w) => w.close()));
  await sleep(200);
  assert.equal(seen.size, N);
  assert.deepEqual(
    [...seen.values()].filter((n) => n > 1),
    [],
    "none twice",
  );
  assert.deepEqual(early, []);
  const { pending, inFlight } = await producer.stats();
  assert.deepEqual({ pending, inFlight }, { pending: 0, inFlight: 0 });
});

test("a slot that takes again before its nack lands: the nack still comes first, the item comes back", async () => {
  const q = open({ maxAttempts: 3 });
  await q.offer("again", 0, { id: "n1" });
  await q.offer("fine", 0, { id: "n2" });
  const attempts = [];
  const done = signal();
  const w = q.process(
    async (value, job) => {
      attempts.push(`${value}:${job.attempt}`);
      if (value === "again" && job.attempt === 1) throw new Error("once");
      if (attempts.length === 3) done.resolve();
    },
    { concurrency: 1, retryDelayMs: 0 },
  );
  await Promise.race([done.promise, sleep(10_000)]);
  await w.close();
  assert.deepEqual(attempts, ["again:1", "fine:1", "again:2"]);
  const { pending, inFlight, dead } = await q.stats();
  assert.deepEqual({ pending, inFlight, dead }, { pending: 0, inFlight: 0, dead: 0 });
});

test("close() of a worker waits for the acks on their way", async () => {
  const q = open();
  await q.offerMany(Array.from({ length: 50 }, (_, i) => ({ value: i, delayMs: 0 })));
  let n = 0;
  const done = signal();
  const w = q.process(
    () => {
      if (++n === 50) done.resolve();
    },
    { concurrency: 5 },
  );
  await Promise.race([done.promise, sleep(10_000)]);
  await w.close();
  // Straight after close(): the acks have landed.
  const { inFlight, pending } = await q.stats();
  assert.deepEqual({ inFlight, pending }, { inFlight: 0, pending: 0 });
});
