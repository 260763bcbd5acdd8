// The failure-injection sweep: every storage call that open, offer, offerAt, offerMany,
// cancel, reschedule, deliver, retryDead, deleteDead, purgeDead, schedule and unschedule make, failed once in turn,
// in each situation that reaches a different call (the head moves or not, the queue empties,
// the alarm is right or stale, a handler fails, an item dies, …). After each failure: memory
// agrees with storage (a queue reopened from it holds the same items and dead letters), a call
// that rejected changed nothing, the alarm is set whenever items are pending and never later
// than the head; then the call is retried: nothing is lost or stored twice, each due item is
// delivered (twice only when its outcome could not be stored: at least once), and the alarm is
// right again.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DurableDelayQueue,
  FakeStorage,
  T0,
  assertAgrees,
  assertAlarmExact,
  assertAlarmNotLate,
  dead,
  deadlineOf,
  manualClock,
  values,
} from "./durable-helpers.mjs";

/** The queue every situation starts from: a (100), b and c (both 300, FIFO), d (500); `dead` items are dead letters. */
async function build(clock, { maxAttempts = 5, deadLetters = [] } = {}) {
  clock.now = T0;
  const storage = new FakeStorage();
  const queue = await DurableDelayQueue.open(storage, { maxAttempts });
  const ids = {};
  for (const [value, delay] of [
    ["a", 100],
    ["b", 300],
    ["c", 300],
    ["d", 500],
  ])
    ids[value] = await queue.offer(value, delay);
  for (const id of deadLetters) await bury(storage, queue, id);
  return { storage, queue, ids, maxAttempts };
}

/** Makes `id` a dead letter: offered overdue, delivered to a handler that throws until it dies. */
async function bury(storage, queue, id) {
  await queue.offerAt(`value of ${id}`, -1, { id });
  await storage.fire(() =>
    queue.deliver(
      (_v, job) => {
        if (job.id === id) throw new Error(`${id} fails`);
      },
      { retryDelayMs: -2 },
    ),
  );
}

/**
 * Situations: `prepare` (optional) shapes the queue; `call` is the operation under test;
 * `retry` runs it again after a rejection; `check` asserts the end state after the retry.
 */
const offers = (name, call, expectedOrder, prepare, options) => ({
  op: name.split(":")[0],
  name,
  options,
  prepare,
  call,
  retry: call,
  check: ({ queue }) => assert.deepEqual(values(queue), expectedOrder),
});

/** deliver() from the alarm (or a request) at `at`, recording what it hands out. */
const delivering = (at, handler = () => {}, { fromAlarm = true, retryDelayMs } = {}) => ({
  prepare: (s) => {
    s.clock.now = T0 + at;
    s.delivered = [];
    s.deliver = () => {
      const run = () =>
        s.queue.deliver(
          (v, job) => {
            s.delivered.push(v);
            return handler(v, job, s);
          },
          { retryDelayMs },
        );
      return fromAlarm ? s.storage.fire(run) : run();
    };
  },
  call: (s) => s.deliver(),
  retry: (s) => s.deliver(),
});

const situations = [
  offers("offer: becomes the head", (s) => s.queue.offer("new", 50), ["new", "a", "b", "c", "d"]),
  offers("offer: behind the head", (s) => s.queue.offer("new", 300), ["a", "b", "c", "new", "d"]),
  offers("offer: into an empty queue", (s) => s.queue.offer("new", 50), ["new"], emptied),
  offers("offer: replaces the head, later", (s) => s.queue.offer("new", 400, { id: s.ids.a }), ["b", "c", "new", "d"]),
  offers("offer: keep, the id present", (s) => s.queue.offer("new", 1, { id: s.ids.c, ifExists: "keep" }), [
    "a",
    "b",
    "c",
    "d",
  ]),
  offers("offer: extend, in place", (s) => s.queue.offer("new", 10, { id: s.ids.b, ifExists: "extend" }), [
    "a",
    "new",
    "c",
    "d",
  ]),
  offers("offer: extend, moved later", (s) => s.queue.offer("new", 450, { id: s.ids.a, ifExists: "extend" }), [
    "b",
    "c",
    "new",
    "d",
  ]),
  offers("offerAt: overdue (a deadline before 1970)", (s) => s.queue.offerAt("new", -5), ["new", "a", "b", "c", "d"]),
  offers("offerAt: a Date behind the head", (s) => s.queue.offerAt("new", new Date(T0 + 400)), [
    "a",
    "b",
    "c",
    "new",
    "d",
  ]),
  offers(
    "offerMany: several, one replacing the head, one kept",
    (s) =>
      s.queue.offerMany([
        { value: "x", delayMs: 50 },
        { value: "y", delayMs: 600, id: s.ids.a },
        { value: "z", deadline: T0 + 1, id: s.ids.d, ifExists: "keep" },
      ]),
    ["x", "b", "c", "d", "y"],
  ),
  offers(
    "offerMany: a dead letter replaced",
    (s) => s.queue.offerMany([{ value: "back", delayMs: 50, id: "gone" }]),
    ["back", "a", "b", "c", "d"],
    undefined,
    { deadLetters: ["gone"] },
  ),
  ...[
    ["cancel: the head", "a", ["b", "c", "d"]],
    ["cancel: not the head", "c", ["a", "b", "d"]],
    ["cancel: the last item", "a", [], (s) => onlyA(s)],
  ].map(([name, victim, order, prepare]) => ({
    op: "cancel",
    name,
    prepare,
    call: (s) => s.queue.cancel(s.ids[victim]),
    retry: async (s) => assert.equal(await s.queue.cancel(s.ids[victim]), true),
    check: ({ queue, ids, result }) => {
      assert.deepEqual(values(queue), order);
      if (result.ok) assert.equal(result.value, true);
      assert.equal(deadlineOf(queue, ids[victim]), undefined);
    },
  })),
  ...[
    ["reschedule: the head, later", "a", 400, ["b", "c", "a", "d"]],
    ["reschedule: the head, earlier", "a", 50, ["a", "b", "c", "d"]],
    ["reschedule: the head, to a tie with the next", "a", 300, ["b", "c", "a", "d"]],
    ["reschedule: another item to the head", "d", 10, ["d", "a", "b", "c"]],
    ["reschedule: another item, later", "b", 600, ["a", "c", "d", "b"]],
    ["reschedule: the only item", "a", 700, ["a"], (s) => onlyA(s)],
  ].map(([name, item, delay, order, prepare]) => ({
    op: "reschedule",
    name,
    prepare,
    call: (s) => s.queue.reschedule(s.ids[item], delay),
    retry: async (s) => assert.equal(await s.queue.reschedule(s.ids[item], delay), true),
    check: ({ queue, ids }) => {
      assert.deepEqual(values(queue), order);
      assert.equal(deadlineOf(queue, ids[item]), T0 + delay);
    },
  })),
  ...[
    ["deliver: three due, from the alarm", 300, ["a", "b", "c"], true],
    ["deliver: every item, from the alarm", 500, ["a", "b", "c", "d"], true],
    ["deliver: an early alarm (nothing due)", 99, [], true],
    ["deliver: called from a request", 300, ["a", "b", "c"], false],
  ].map(([name, at, due, fromAlarm]) => ({
    op: "deliver",
    name,
    ...delivering(at, undefined, { fromAlarm }),
    check: ({ queue, delivered, result }) => {
      assert.deepEqual([...new Set(delivered)], due, "each due item, in order");
      const twice = delivered.length - due.length;
      assert.ok(twice === 0 || (twice === 1 && !result.ok), `delivered ${delivered}: twice without a failure`);
      assert.deepEqual(
        values(queue),
        ["a", "b", "c", "d"].filter((v) => !due.includes(v)),
      );
    },
  })),
  {
    op: "deliver",
    name: "deliver: a handler fails (its retry stored, due at once, delivered again)",
    ...delivering(
      300,
      (v, job) => {
        if (v === "b" && job.attempt === 1) throw new Error("b fails once");
      },
      { retryDelayMs: 0 },
    ),
    check: ({ queue, delivered }) => {
      assert.deepEqual([...new Set(delivered)], ["a", "b", "c"]);
      assert.ok(delivered.length <= 6, `${delivered}`);
      assert.deepEqual(values(queue), ["d"]);
    },
  },
  {
    op: "deliver",
    name: "deliver: a handler fails on the last attempt (a dead letter)",
    options: { maxAttempts: 1 },
    ...delivering(100, (v) => {
      if (v === "a") throw new Error("a fails");
    }),
    check: async ({ queue }) => {
      assert.deepEqual(values(queue), ["b", "c", "d"]);
      assert.deepEqual(
        (await dead(queue)).map((d) => d.value),
        ["a"],
      );
    },
  },
  {
    op: "deliver",
    name: "deliver: a handler replaces its own item, then fails",
    ...delivering(100, async (_v, job, s) => {
      await s.queue.offer("a again", 1000, { id: job.id });
      throw new Error("fails after replacing itself");
    }),
    // Unless the handler's own offer was the call that failed: then a is back for a retry.
    check: ({ queue }) => assert.ok(["a again", "a"].includes(values(queue)[3]), `${values(queue)}`),
  },
  ...[
    ["retryDead: a dead letter back", (s) => s.queue.retryDead("gone"), ["gone"], []],
    ["deleteDead: a dead letter removed", (s) => s.queue.deleteDead("gone"), [], []],
    ["purgeDead: every dead letter", (s) => s.queue.purgeDead(), [], []],
  ].map(([name, call, pendingToo, deadAfter]) => ({
    op: name.split(":")[0],
    name,
    options: { deadLetters: ["gone", "also gone"] },
    call,
    retry: call,
    check: async ({ queue }) => {
      const ids = queue.toArray().map((i) => i.id);
      for (const id of pendingToo) assert.ok(ids.includes(id), `${id} is pending`);
      const left = (await dead(queue)).map((d) => d.id);
      if (name.startsWith("purgeDead")) assert.deepEqual(left, deadAfter);
      else assert.deepEqual(left, ["also gone"]);
    },
  })),
  // Schedules: each `s` (or `cr`) item is a schedule's pending occurrence.
  ...[
    ["schedule: a new every schedule", undefined, (s) => schedule(s, { every: 200 }), ["a", "s", "b", "c", "d"]],
    ["schedule: cron", undefined, (s) => schedule(s, { cron: "* * * * * *" }, "cr"), ["a", "b", "c", "d", "cr"]],
    [
      "schedule: the same rule again (the chain goes on, with the new value)",
      (s) => schedule(s, { every: 200 }),
      (s) => schedule(s, { every: 200 }, "s2", { catchUp: "all" }),
      ["a", "s2", "b", "c", "d"],
    ],
    [
      "schedule: a new rule (its pending occurrence replaced)",
      (s) => schedule(s, { every: 200 }),
      (s) => schedule(s, { every: 50 }),
      ["s", "a", "b", "c", "d"],
    ],
  ].map(([name, prepare, call, order]) => ({
    op: "schedule",
    name,
    prepare,
    call,
    retry: call,
    check: async ({ queue }) => {
      assert.deepEqual(values(queue), order);
      assert.equal((await queue.schedules()).length, 1);
    },
  })),
  {
    op: "unschedule",
    name: "unschedule: its pending occurrence removed",
    prepare: (s) => schedule(s, { every: 200 }),
    call: (s) => s.queue.unschedule("s"),
    retry: async (s) => assert.equal(await s.queue.unschedule("s"), true),
    check: async ({ queue }) => {
      assert.deepEqual(values(queue), ["a", "b", "c", "d"]);
      assert.deepEqual(await queue.schedules(), []);
    },
  },
  ...[
    [
      "deliver: a schedule's occurrence, on time (the next placed with it)",
      "one",
      200,
      250,
      ["a", "s"],
      ["b", "c", "s", "d"],
    ],
    [
      'deliver: a schedule fell behind, catchUp "all" (each missed one)',
      "all",
      100,
      250,
      ["a", "s", "s"],
      ["b", "c", "s", "d"],
    ],
    [
      'deliver: a schedule fell behind, catchUp "one" (the latest once)',
      "one",
      100,
      450,
      ["a", "s", "b", "c"],
      ["d", "s"],
    ],
    ['deliver: a schedule fell behind, catchUp "none"', "none", 100, 450, ["a", "b", "c"], ["d", "s"]],
  ].map(([name, catchUp, every, at, due, order]) => ({
    op: "deliver",
    name,
    prepare: async (s) => {
      await schedule(s, { every }, "s", { catchUp });
      await delivering(at).prepare(s);
    },
    call: (s) => s.deliver(),
    retry: (s) => s.deliver(),
    check: async ({ queue, delivered, result }) => {
      // Each occurrence once, but for one whose outcome could not be stored (at least once).
      const twice = delivered.length - due.length;
      assert.ok(twice === 0 || (twice === 1 && !result.ok), `delivered ${delivered}`);
      assert.deepEqual(values(queue), order);
      const [sch] = await queue.schedules();
      assert.equal(sch.nextRun, queue.toArray().find((i) => i.value === "s").deadline);
    },
  })),
  {
    op: "open",
    name: "open: a schedule whose pending occurrence storage no longer holds gets its next",
    prepare: async (s) => {
      await schedule(s, { every: 200 });
      await s.storage.delete(`tarry:item:s@${T0 + 200}`);
    },
    call: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    retry: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    check: async ({ queue }) => {
      assert.deepEqual(values(queue), ["a", "s", "b", "c", "d"]);
      assert.equal((await queue.schedules())[0].nextRun, T0 + 200);
    },
  },
  ...[
    ["open: the alarm as it should be", () => {}],
    ["open: the alarm lost", (s) => s.storage.fire(() => {})],
    ["open: the alarm stale (for an item gone)", (s) => s.storage.setAlarm(T0 + 1)],
    ["open: an empty queue and a stale alarm", async (s) => (await emptied(s), s.storage.setAlarm(T0 + 5))],
  ].map(([name, prepare]) => ({
    op: "open",
    name,
    options: { deadLetters: ["gone"] },
    prepare: async (s) => {
      await prepare(s);
      s.expected = { items: s.queue.toArray(), dead: await dead(s.queue) };
    },
    call: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    retry: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    check: async ({ queue, expected }) =>
      assert.deepEqual({ items: queue.toArray(), dead: await dead(queue) }, expected),
  })),
];

/** Schedule `s` (id "s") with `rule`. */
function schedule(s, rule, value = "s", opts) {
  return s.queue.schedule(value === "cr" ? "cr" : "s", rule, value, opts);
}

async function emptied(s) {
  for (const id of Object.values(s.ids)) await s.queue.cancel(id);
}

async function onlyA(s) {
  for (const v of ["b", "c", "d"]) await s.queue.cancel(s.ids[v]);
}

/** Storage calls `situation`'s call makes when nothing fails (checking what it leaves then). */
async function countCalls(clock, situation) {
  const s = { clock, ...(await build(clock, situation.options)) };
  await situation.prepare?.(s);
  const before = s.storage.calls.length;
  s.result = { ok: true, value: await situation.call(s) };
  const calls = s.storage.calls.slice(before);
  await situation.check(s);
  await assertAgrees(s.queue, s.storage, situation.name);
  assertAlarmExact(s.queue, s.storage, situation.name);
  return calls;
}

test("failure-injection sweep: every storage call of every operation, failed once", async (t) => {
  const clock = manualClock(t);
  const pairs = {};
  const kinds = {};
  let runs = 0;
  for (const situation of situations) {
    const calls = await countCalls(clock, situation);
    assert.ok(calls.length > 0, `${situation.name} makes no storage call`);
    kinds[situation.op] = [...new Set([...(kinds[situation.op] ?? []), ...calls])].sort();
    for (let k = 0; k < calls.length; k++) {
      const where = `${situation.name}, failing call ${k} (${calls[k]} of ${calls.join(", ")})`;
      const s = { clock, ...(await build(clock, situation.options)) };
      await situation.prepare?.(s);
      const before = { items: s.queue.toArray(), dead: await dead(s.queue), stored: s.storage.dump() };
      s.storage.failCall(k);
      try {
        s.result = { ok: true, value: await situation.call(s) };
      } catch (error) {
        assert.equal(error.name, "InjectedFailure", `${where}: ${error.stack}`);
        s.result = { ok: false, error };
      }
      // Right after the failure.
      if (!s.result.ok && situation.op !== "deliver") {
        if (situation.op !== "open") {
          assert.deepEqual(s.queue.toArray(), before.items, `${where}: memory changed`);
          assert.deepEqual(await dead(s.queue), before.dead, `${where}: dead letters changed`);
        }
        assert.deepEqual(s.storage.dump(), before.stored, `${where}: storage changed`);
      }
      if (s.result.ok || situation.op !== "open") {
        await assertAgrees(s.queue, s.storage, where);
        assertAlarmNotLate(s.queue, s.storage, where);
      }
      // The retry.
      if (!s.result.ok) await situation.retry(s);
      await situation.check(s);
      await assertAgrees(s.queue, s.storage, `${where}, after the retry`);
      assertAlarmNotLate(s.queue, s.storage, `${where}, after the retry`);
      // The next alarm (early here, or for an overdue item) leaves the alarm exact.
      const early = [];
      await s.storage.fire(() =>
        s.queue.deliver((v, { deadline }) => {
          if (deadline > clock.now) early.push(v);
        }),
      );
      assert.deepEqual(early, [], `${where}: delivered early`);
      assertAlarmExact(s.queue, s.storage, `${where}, after the next alarm`);
      runs++;
      pairs[situation.op] = (pairs[situation.op] ?? 0) + 1;
    }
  }
  t.diagnostic(`${runs} failing calls: ${JSON.stringify(pairs)} over ${situations.length} situations`);
  t.diagnostic(`kinds of call failed, by operation: ${JSON.stringify(kinds)}`);
  // Every operation that touches storage was reached.
  assert.deepEqual(Object.keys(pairs).sort(), [
    "cancel",
    "deleteDead",
    "deliver",
    "offer",
    "offerAt",
    "offerMany",
    "open",
    "purgeDead",
    "reschedule",
    "retryDead",
    "schedule",
    "unschedule",
  ]);
});
