// A Redis dead letter's reason (js/engine/reason.js): the message as `reason`, the stack apart, both
// bounded, whether a process() handler threw or nack() was given the error.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { RedisDelayQueue } from "tarry-queue/redis";
import { MAX_REASON } from "../../js/engine/reason.js";
import { startRedis } from "../../tools/redis-server.mjs";

let server;
let queue;

before(async () => {
  server = await startRedis();
  queue = new RedisDelayQueue({ redis: server.url, name: "reasons", maxAttempts: 1 });
});

after(async () => {
  await queue?.close();
  await server?.stop();
});

test("nack with an Error: reason is its message, stack apart; a text reason has no stack; a long one is cut", async () => {
  await queue.offerMany([
    { id: "e", value: 1, delayMs: 0 },
    { id: "t", value: 2, delayMs: 0 },
    { id: "long", value: 3, delayMs: 0 },
  ]);
  const reasons = {
    e: new TypeError("card declined"),
    t: "payment service answered 503",
    long: new Error("y".repeat(50_000)),
  };
  for (let i = 0; i < 3; i++) {
    const job = await queue.take();
    await job.nack({ reason: reasons[job.id] });
  }
  const byId = Object.fromEntries((await queue.deadLetters()).items.map((d) => [d.id, d]));
  assert.equal(byId.e.reason, "TypeError: card declined");
  assert.match(byId.e.stack, /^TypeError: card declined\n\s+at /);
  assert.deepEqual([byId.t.reason, "stack" in byId.t], ["payment service answered 503", false]);
  assert.equal(byId.long.reason.length, MAX_REASON);
  const got = await queue.get("e");
  assert.deepEqual([got.reason, got.stack], [byId.e.reason, byId.e.stack]);
});

test("a process() handler's error: the same shape", async () => {
  await queue.offer("boom", 0, { id: "p" });
  let seen;
  const died = new Promise((resolve) => queue.addEventListener("dead", (e) => resolve(e.detail), { once: true }));
  const worker = queue.process(() => {
    seen = new Error("handler failed");
    throw seen;
  });
  const detail = await died;
  await worker.close();
  assert.equal(detail.reason, "Error: handler failed", "the event tells the message");
  const p = await queue.get("p");
  assert.equal(p.reason, "Error: handler failed");
  assert.equal(p.stack, seen.stack);
});
