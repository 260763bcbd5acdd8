// A dead letter's reason (js/engine/reason.js): the message and, separately, the stack, each bounded
// and redacted; and the Durable Object engine keeping both (tests/redis/reasons.test.mjs: Redis).
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_REASON, MAX_STACK, reasonOf } from "../../js/engine/reason.js";
import { DurableDelayQueue, FakeStorage, reopen } from "./durable-helpers.mjs";

test("reasonOf: an Error's name and message as the reason, its stack apart; other values as text", () => {
  const e = new TypeError("card declined");
  const { reason, stack } = reasonOf(e);
  assert.equal(reason, "TypeError: card declined");
  assert.equal(stack, e.stack);
  assert.match(stack, /\n\s+at /);
  assert.deepEqual(reasonOf("payment service answered 503"), {
    reason: "payment service answered 503",
    stack: undefined,
  });
  assert.deepEqual(reasonOf(42), { reason: "42", stack: undefined });
  const bare = new Error("");
  assert.equal(reasonOf(bare).reason, "Error");
});

test("reasonOf: a long message and a long stack are cut at their limits; a URL's password is masked", () => {
  const e = new Error("x".repeat(100_000));
  const { reason, stack } = reasonOf(e);
  assert.equal(reason.length, MAX_REASON);
  assert.ok(reason.endsWith("…"));
  assert.ok(stack.length <= MAX_STACK);
  const leaky = reasonOf(new Error("no connection to redis://:S3cret@10.0.0.1:6379"));
  assert.equal(leaky.reason, "Error: no connection to redis://:***@10.0.0.1:6379");
  assert.ok(!leaky.stack.includes("S3cret"));
  assert.equal(reasonOf("postgres://app:S3cret@db/x").reason, "postgres://app:***@db/x");
});

test("DurableDelayQueue: a dead letter keeps the message as its reason and the stack beside it, across a restart", async () => {
  const storage = new FakeStorage();
  const q = await DurableDelayQueue.open(storage, { maxAttempts: 1 });
  await q.offer("v", 0, { id: "a" });
  await q.offer("w", 0, { id: "b" });
  await q.deliver((v) => {
    if (v === "v") throw new RangeError("amount out of range");
    throw "just text";
  });
  const [a, b] = (await q.deadLetters()).items;
  assert.equal(a.reason, "RangeError: amount out of range");
  assert.match(a.stack, /^RangeError: amount out of range\n\s+at /);
  assert.deepEqual([b.reason, "stack" in b], ["just text", false]);
  const again = await reopen(storage);
  const got = await again.get("a");
  assert.deepEqual([got.reason, got.stack], [a.reason, a.stack]);
});
