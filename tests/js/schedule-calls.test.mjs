// The schedule calls the Redis and Postgres classes share (js/schedule/calls.js), on a fake
// schedules role: each call is checked before the queue is asked whether it is open and
// before the role hears of it, a closed queue's call reaches no role, and the head a resume or
// trigger placed reaches the consumer (none when it placed nothing). The engines' own runs
// are the contract suite's (tests/contract/schedule-cases.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ScheduleCalls } from "../../js/schedule/calls.js";
import { ClosedError } from "../../js/engine/errors.js";

/** A role that records what reaches it, and a queue that may be closed. */
function fixture(replies = {}) {
  const calls = [];
  const heads = [];
  let closed = false;
  const role = {
    schedule: async (checked) => calls.push(["schedule", checked.spec.id, checked.json]) && { id: checked.spec.id },
    unschedule: async (id) => calls.push(["unschedule", id]) && true,
    list: async () => calls.push(["list"]) && [],
    pause: async (id) => calls.push(["pause", id]) && true,
    resume: async (id) => (calls.push(["resume", id]), replies.resume ?? { done: true, head: 1234 }),
    trigger: async (id) => (calls.push(["trigger", id]), replies.trigger ?? { done: false, head: undefined }),
    nextRuns: async (id, n) => calls.push(["nextRuns", id, n]) && [1, 2],
  };
  const open = () => {
    calls.push(["open"]);
    if (closed) throw new ClosedError("the queue is closed");
  };
  const s = new ScheduleCalls(role, open, (head) => heads.push(head));
  return { s, calls, heads, close: () => (closed = true) };
}

test("each call is checked, then the queue asked whether it is open, then the role runs it", async () => {
  const { s, calls } = fixture();
  await s.schedule("daily", { every: 60_000 }, { n: 1 });
  await s.unschedule("daily");
  await s.list();
  await s.pause("daily");
  await s.nextRuns("daily", 3);
  assert.deepEqual(calls, [
    ["open"],
    ["schedule", "daily", '{"n":1}'],
    ["open"],
    ["unschedule", "daily"],
    ["open"],
    ["list"],
    ["open"],
    ["pause", "daily"],
    ["open"],
    ["nextRuns", "daily", 3],
  ]);
});

test("bad arguments reject naming them, before the queue or the role hears of the call", async () => {
  const { s, calls } = fixture();
  await assert.rejects(s.unschedule(""), { name: "RangeError", message: /^id must not be empty/ });
  await assert.rejects(s.pause(42), { name: "TypeError", message: /^id must be a string/ });
  await assert.rejects(s.resume("x".repeat(10_000)), { name: "RangeError", message: /id must be at most/ });
  await assert.rejects(s.nextRuns("daily", 0), RangeError);
  await assert.rejects(s.schedule("daily", { every: -1 }, 1), RangeError);
  await assert.rejects(
    s.schedule("daily", { every: 1000 }, () => {}),
    TypeError,
  );
  assert.deepEqual(calls, []);
});

test("a closed queue rejects with ClosedError and its role hears nothing", async () => {
  const { s, calls, close } = fixture();
  close();
  await assert.rejects(s.schedule("daily", { every: 1000 }, 1), ClosedError);
  await assert.rejects(s.trigger("daily"), ClosedError);
  await assert.rejects(s.list(), ClosedError);
  assert.deepEqual(
    calls.filter(([what]) => what !== "open"),
    [],
  );
});

test("resume and trigger resolve `done` and tell the consumer of the head they placed, only when they placed one", async () => {
  const placed = fixture({ resume: { done: true, head: 1234 }, trigger: { done: true, head: 99 } });
  assert.equal(await placed.s.resume("a"), true);
  assert.equal(await placed.s.trigger("a"), true);
  assert.deepEqual(placed.heads, [1234, 99]);

  const none = fixture({ resume: { done: false, head: undefined }, trigger: { done: false, head: undefined } });
  assert.equal(await none.s.resume("a"), false);
  assert.equal(await none.s.trigger("a"), false);
  assert.deepEqual(none.heads, []);
});
