// The failure-injection sweep: every storage call that open, offer, offerAt, cancel,
// reschedule and deliver make, failed once in turn, in each situation that reaches a different
// call (the head moves or not, the queue empties, the alarm is right or stale, …). After each
// failure: memory agrees with storage (a queue reopened from it holds the same items), a call
// that rejected changed nothing, the alarm is set whenever items are pending and never later
// than the head; then the call is retried: nothing is lost or stored twice, each due item is
// delivered (twice only when its removal failed after its callback: at least once), and the
// alarm is right again.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DurableDelayQueue,
  FakeStorage,
  T0,
  assertAgrees,
  assertAlarmExact,
  assertAlarmNotLate,
  manualClock,
  values,
} from "./durable-helpers.mjs";

/** The queue every situation starts from: a (100), b and c (both 300, FIFO), d (500). */
async function build(
  clock,
  items = [
    ["a", 100],
    ["b", 300],
    ["c", 300],
    ["d", 500],
  ],
) {
  clock.now = T0;
  const storage = new FakeStorage();
  const queue = await DurableDelayQueue.open(storage);
  const ids = {};
  for (const [value, delay] of items) ids[value] = await queue.offer(value, delay);
  return { storage, queue, ids };
}

/**
 * Situations: `prepare` (optional) shapes the queue; `call` is the operation under test;
 * `retry` runs it again after a rejection; `check` asserts the end state after the retry;
 * `rejects` names the error a call rejects with even when no storage call fails.
 */
const offers = (name, call, expectedOrder, prepare) => ({
  op: name.split(":")[0],
  name,
  prepare,
  call,
  retry: call,
  check: ({ queue }) => assert.deepEqual(values(queue), expectedOrder),
});

const situations = [
  offers("offer: becomes the head", (s) => s.queue.offer("new", 50), ["new", "a", "b", "c", "d"]),
  offers("offer: behind the head", (s) => s.queue.offer("new", 300), ["a", "b", "c", "new", "d"]),
  offers("offer: into an empty queue", (s) => s.queue.offer("new", 50), ["new"], emptied),
  offers("offerAt: overdue (a deadline before 1970)", (s) => s.queue.offerAt("new", -5), ["new", "a", "b", "c", "d"]),
  offers("offerAt: a Date behind the head", (s) => s.queue.offerAt("new", new Date(T0 + 400)), [
    "a",
    "b",
    "c",
    "new",
    "d",
  ]),
  ...[
    ["cancel: the head", "a", ["b", "c", "d"]],
    ["cancel: not the head", "c", ["a", "b", "d"]],
    ["cancel: the last item", "a", [], (s) => onlyA(s)],
  ].map(([name, victim, order, prepare]) => ({
    op: "cancel",
    name,
    prepare,
    call: (s) => s.queue.cancel(s.ids[victim]),
    retry: async (s) => assert.equal(await s.queue.cancel(s.ids[victim]), victim),
    check: ({ queue, ids, result }) => {
      assert.deepEqual(values(queue), order);
      if (result.ok) assert.equal(result.value, victim);
      assert.equal(queue.deadlineOf(ids[victim]), undefined);
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
      assert.equal(queue.deadlineOf(ids[item]), T0 + delay);
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
    prepare: (s) => {
      s.clock.now = T0 + at;
      s.delivered = [];
      s.deliver = () => {
        const run = () => s.queue.deliver((v) => s.delivered.push(v));
        return fromAlarm ? s.storage.fire(run) : run();
      };
    },
    call: (s) => s.deliver(),
    retry: (s) => s.deliver(),
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
    name: "deliver: a callback fails (the retry's alarm)",
    rejects: "CallbackFailure",
    prepare: (s) => {
      s.clock.now = T0 + 300;
      s.delivered = [];
      let failed = false;
      s.deliver = () =>
        s.storage.fire(() =>
          s.queue.deliver((v) => {
            s.delivered.push(v);
            if (v === "b" && !failed) {
              failed = true;
              throw Object.assign(new Error("b failed"), { name: "CallbackFailure" });
            }
          }),
        );
    },
    call: (s) => s.deliver(),
    // Past any backoff (d is due by then too); again if b had not failed yet.
    retry: async (s) => {
      s.clock.now += 3_600_000;
      await s.deliver().catch(async (e) => {
        assert.equal(e.name, "CallbackFailure");
        s.clock.now += 3_600_000;
        await s.deliver();
      });
    },
    check: ({ queue, delivered }) => {
      assert.deepEqual([...new Set(delivered)], ["a", "b", "c", "d"]);
      assert.ok(delivered.length <= 6, `${delivered}`);
      assert.equal(queue.size, 0);
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
    prepare: async (s) => {
      await prepare(s);
      s.expected = s.queue.toArray();
    },
    call: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    retry: async (s) => (s.queue = await DurableDelayQueue.open(s.storage)),
    check: ({ queue, expected }) => assert.deepEqual(queue.toArray(), expected),
  })),
];

async function emptied(s) {
  for (const id of Object.values(s.ids)) await s.queue.cancel(id);
}

async function onlyA(s) {
  for (const v of ["b", "c", "d"]) await s.queue.cancel(s.ids[v]);
}

/** Storage calls `situation`'s call makes when nothing fails (checking what it leaves then). */
async function countCalls(clock, situation) {
  const s = { clock, ...(await build(clock)) };
  await situation.prepare?.(s);
  const before = s.storage.calls.length;
  let calls;
  if (situation.rejects) {
    await assert.rejects(situation.call(s), { name: situation.rejects });
    calls = s.storage.calls.slice(before);
    await situation.retry(s);
  } else {
    s.result = { ok: true, value: await situation.call(s) };
    calls = s.storage.calls.slice(before);
  }
  situation.check(s);
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
      const s = { clock, ...(await build(clock)) };
      await situation.prepare?.(s);
      const before = { items: s.queue.toArray(), stored: s.storage.dump() };
      s.storage.failCall(k);
      try {
        s.result = { ok: true, value: await situation.call(s) };
      } catch (error) {
        assert.ok([situation.rejects, "InjectedFailure"].includes(error.name), `${where}: ${error.stack}`);
        s.result = { ok: false, error };
      }
      // Right after the failure.
      if (!s.result.ok && situation.op !== "deliver") {
        if (situation.op !== "open") assert.deepEqual(s.queue.toArray(), before.items, `${where}: memory changed`);
        assert.deepEqual(s.storage.dump(), before.stored, `${where}: storage changed`);
      }
      if (s.result.ok || situation.op !== "open") {
        await assertAgrees(s.queue, s.storage, where);
        // After a callback failure the alarm waits for the retry, later than the head.
        if (situation.rejects) assert.ok(s.queue.size === 0 || s.storage.alarm !== null, `${where}: no alarm`);
        else assertAlarmNotLate(s.queue, s.storage, where);
      }
      // The retry.
      if (!s.result.ok) await situation.retry(s);
      situation.check(s);
      await assertAgrees(s.queue, s.storage, `${where}, after the retry`);
      assertAlarmNotLate(s.queue, s.storage, `${where}, after the retry`);
      // The next alarm (early here, or for an overdue item) leaves the alarm exact.
      await s.storage.fire(() =>
        s.queue.deliver((v, { deadline }) => assert.ok(deadline <= clock.now, `${where}: ${v} delivered early`)),
      );
      assertAlarmExact(s.queue, s.storage, `${where}, after the next alarm`);
      runs++;
      pairs[situation.op] = (pairs[situation.op] ?? 0) + 1;
    }
  }
  t.diagnostic(`${runs} failing calls: ${JSON.stringify(pairs)} over ${situations.length} situations`);
  t.diagnostic(`kinds of call failed, by operation: ${JSON.stringify(kinds)}`);
  // Every operation and call kind the brief names was reached.
  assert.deepEqual(Object.keys(pairs).sort(), ["cancel", "deliver", "offer", "offerAt", "open", "reschedule"]);
});
