// DurableDelayQueue's own cases, against a fake Durable Object storage
// (tools/durable-storage.mjs) on a clock moved by hand, so that deadlines, alarms and
// orders are exact: the alarm firing early, late and twice, overlapping deliveries, failing
// storage calls, what survives a restart (attempts, retry deadlines, dead letters, deliveries
// that never finished), one transaction per call, and the arguments only Durable Objects
// have. What RedisDelayQueue promises too is in the contract suite (tests/contract), and
// tests/js/durable-sweep.test.mjs fails every storage call of every operation in turn.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DurableDelayQueue,
  FakeStorage,
  T0,
  alarmFor,
  assertAgrees,
  assertAlarmExact,
  dead,
  deadlineOf,
  manualClock,
  reopen,
  values,
} from "./durable-helpers.mjs";

const open = (storage, opts) => DurableDelayQueue.open(storage, opts);

/** A clock at T0, an empty storage and a queue on it. */
async function fresh(t, opts) {
  const clock = manualClock(t);
  const storage = new FakeStorage();
  return { clock, storage, q: await open(storage, opts) };
}
/** Lets every other pending task run (a handler that awaits I/O). */
const tick = () => new Promise((r) => setImmediate(r));

/** A deliver() handler that records what it got, awaiting I/O in between. */
function recorder() {
  const got = [];
  const handler = async (value, job) => {
    got.push({ ...job, value });
    await tick();
  };
  return { got, handler, values: () => got.map((g) => g.value) };
}

// ---- storage failures: a call that rejects has changed nothing --------------------------

test("offer: a failing setAlarm changes nothing; the retry stores one item and sets the alarm", async (t) => {
  const { clock, storage, q } = await fresh(t);
  storage.failOn("setAlarm");
  await assert.rejects(q.offer("a", 1000, { id: "a" }), { name: "InjectedFailure" });
  assert.equal(await q.size(), 0);
  assert.deepEqual(storage.dump(), new FakeStorage().dump(), "nothing stored");
  assert.equal(await q.offer("a", 1000, { id: "a" }), "a");
  assert.deepEqual(values(q), ["a"]);
  assert.equal(storage.alarm, T0 + 1000);
  await assertAgrees(q, storage);
  // And the queue knows the alarm as it is: an earlier offer moves it.
  await q.offer("b", 500);
  assert.equal(storage.alarm, T0 + 500);
  clock.advance(1000);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 2);
  assert.deepEqual(r.values(), ["b", "a"]);
  assert.equal(r.got[1].id, "a");
});

test("cancel: a failing delete changes nothing, in memory or storage; the retry cancels", async (t) => {
  const { storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  await q.offer("b", 200);
  const before = { items: q.toArray(), stored: storage.dump() };
  storage.failOn("delete");
  await assert.rejects(q.cancel(a), { name: "InjectedFailure" });
  assert.deepEqual(q.toArray(), before.items);
  assert.deepEqual(storage.dump(), before.stored);
  assert.equal(await q.delayOf(a), 100);
  assert.equal(await q.cancel(a), true);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("reschedule: a failing put changes nothing, in memory or storage; the retry moves it", async (t) => {
  const { storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  await q.offer("b", 200);
  const before = { items: q.toArray(), stored: storage.dump() };
  storage.failOn("put");
  await assert.rejects(q.reschedule(a, 300), { name: "InjectedFailure" });
  assert.deepEqual(q.toArray(), before.items);
  assert.deepEqual(storage.dump(), before.stored);
  assert.equal(await q.reschedule(a, 300), true);
  assert.equal(deadlineOf(q, a), T0 + 300);
  assert.deepEqual(values(q), ["b", "a"]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("deliver: a failing delete after the handler keeps the item, its attempt counted, at its place (delivered again)", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 10);
  clock.advance(10);
  const r = recorder();
  storage.failOn("delete");
  await assert.rejects(
    storage.fire(() => q.deliver(r.handler)),
    { name: "InjectedFailure" },
  );
  assert.deepEqual(values(q), ["a", "b"], "a stays ahead of b");
  assert.deepEqual(
    q.toArray().map((i) => i.attempt),
    [1, 0],
  );
  await assertAgrees(q, storage);
  assert.ok(storage.alarm !== null, "the alarm stays for the runtime's retry");
  await storage.fire(() => q.deliver(r.handler));
  assert.deepEqual(
    r.got.map((g) => [g.value, g.attempt]),
    [
      ["a", 1],
      ["a", 2],
      ["b", 1],
    ],
    "a again: at least once",
  );
  assert.equal(storage.alarm, null);
});

// ---- the alarm ----------------------------------------------------------------------------

test("offerAt: a deadline workerd cannot set an alarm for (<= 0) is simply overdue", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offerAt("epoch", 0);
  await q.offerAt("before 1970", -5000);
  await q.offer("later", 100);
  assert.deepEqual(values(q), ["before 1970", "epoch", "later"]);
  assert.ok(storage.alarm !== null && storage.alarm <= T0, `alarm ${storage.alarm} is not at once`);
  const r = recorder();
  await storage.fire(() => q.deliver(r.handler));
  assert.deepEqual(r.values(), ["before 1970", "epoch"]);
  assertAlarmExact(q, storage);
});

test("offerAt: a fractional deadline keeps the alarm from firing early", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const id = await q.offerAt("frac", T0 + 10.25);
  assert.equal(deadlineOf(q, id), T0 + 10.25);
  assert.equal(storage.alarm, T0 + 11, "rounded up, never down");
  clock.now = T0 + 10.2;
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 0, "an alarm before the deadline delivers nothing");
  assert.equal(storage.alarm, T0 + 11);
  clock.now = T0 + 11;
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 1);
  assert.deepEqual(r.got, [{ value: "frac", id, deadline: T0 + 10.25, attempt: 1 }]);
});

test("cancel and reschedule: the alarm follows the head, none for an empty queue", async (t) => {
  const { storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  const b = await q.offer("b", 200);
  const c = await q.offer("c", 300);
  assert.equal(await q.cancel(b), true);
  assertAlarmExact(q, storage, "after cancelling an item behind the head");
  assert.equal(await q.cancel(a), true);
  assert.equal(storage.alarm, T0 + 300, "the alarm moves to the new head");
  assert.equal(await q.reschedule(c, 50), true);
  assert.equal(storage.alarm, T0 + 50, "an earlier head moves the alarm earlier");
  assert.equal(await q.reschedule(c, 500), true);
  assert.equal(storage.alarm, T0 + 500, "and a later one later");
  assert.equal(await q.cancel(c), true);
  assert.equal(storage.alarm, null, "no alarm for an empty queue");
  await assertAgrees(q, storage);
});

test("reschedule: behind the items already due at the new deadline", async (t) => {
  const { storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  await q.offer("b", 200);
  await q.offer("c", 300);
  assert.equal(await q.reschedule(a, 200), true);
  assert.deepEqual(values(q), ["b", "a", "c"], "behind b, which was due at the same time first");
  const back = await reopen(storage);
  assert.deepEqual(back.toArray(), q.toArray(), "the same order after a restart");
});

test("an alarm that fires early delivers nothing and sets the alarm for the head again", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 1000);
  clock.advance(999);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 0);
  assert.deepEqual(r.got, []);
  assert.equal(storage.alarm, T0 + 1000);
  assert.equal((await q.stats()).earlyWakes, 1);
});

test("an alarm that fires late delivers every overdue item in order, FIFO ties, none early", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("d", 5000);
  await q.offer("b1", 200);
  await q.offer("a", 100);
  await q.offer("b2", 200);
  await q.offer("c", 300);
  clock.advance(60_000);
  await q.offer("e", 1); // due after the alarm's delivery began: the next alarm's
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 5);
  assert.deepEqual(r.values(), ["a", "b1", "b2", "c", "d"]);
  for (const g of r.got) assert.ok(g.deadline <= clock.now);
  assert.deepEqual(values(q), ["e"]);
  assertAlarmExact(q, storage);
  const stats = await q.stats();
  assert.equal(stats.latenessMax, 60_000 - 100);
  assert.equal(stats.delivered, 5);
});

test("an alarm that fires twice delivers nothing the second time", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 500);
  clock.advance(10);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 1);
  assert.equal(await storage.fire(() => q.deliver(r.handler)), 0);
  assert.deepEqual(r.values(), ["a"]);
  assertAlarmExact(q, storage);
});

test("items that come due while a delivery runs wait for the next alarm, which is set at once", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 20);
  clock.advance(10);
  const seen = [];
  await storage.fire(() =>
    q.deliver(async (v) => {
      seen.push(v);
      clock.advance(50);
      await q.offer(`${v}-follow-up`, 0);
    }),
  );
  assert.deepEqual(seen, ["a"]);
  assert.deepEqual(values(q), ["b", "a-follow-up"]);
  assert.ok(storage.alarm <= clock.now, "overdue items: the alarm fires at once");
  await assertAgrees(q, storage);
});

// ---- deliveries: side by side, retries, the item in flight ---------------------------------

test("deliver: overlapping calls hand each item out once", async (t) => {
  const { clock, storage, q } = await fresh(t);
  for (const v of ["a", "b", "c"]) await q.offer(v, 10);
  clock.advance(10);
  const r = recorder();
  const counts = await Promise.all([q.deliver(r.handler), q.deliver(r.handler), q.deliver(r.handler)]);
  assert.deepEqual(r.values(), ["a", "b", "c"]);
  assert.equal(
    counts.reduce((a, b) => a + b),
    3,
  );
  assert.equal(await q.size(), 0);
  assert.equal(storage.alarm, null);
});

test("deliver() called outside an alarm, alongside the alarm: each item once, in order", async (t) => {
  const { clock, storage, q } = await fresh(t);
  for (let i = 0; i < 20; i++) await q.offer(i, i % 3);
  clock.advance(5);
  const r = recorder();
  const [n1, n2] = await Promise.all([storage.fire(() => q.deliver(r.handler)), q.deliver(r.handler)]);
  assert.equal(n1 + n2, 20);
  const expected = Array.from({ length: 20 }, (_, i) => i).sort((x, y) => (x % 3) - (y % 3) || x - y);
  assert.deepEqual(r.values(), expected);
  assert.equal(storage.alarm, null);
});

test("a handler that throws: the item comes back at its retry deadline, behind the items due then; deliver() resolves", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("ok", 10);
  await q.offer("flaky", 20);
  await q.offer("behind", 30);
  clock.advance(30);
  const seen = [];
  const handler = (v, job) => {
    seen.push([v, job.attempt]);
    if (v === "flaky" && job.attempt === 1) throw new Error("flaky failed");
  };
  // Retried at once: due at T0 + 30, behind "behind" (due then too), in this same delivery.
  assert.equal(await storage.fire(() => q.deliver(handler, { retryDelayMs: 0 })), 4);
  assert.deepEqual(seen, [
    ["ok", 1],
    ["flaky", 1],
    ["behind", 1],
    ["flaky", 2],
  ]);
  assert.equal(storage.alarm, null);
  const stats = await q.stats();
  assert.equal(stats.retried, 1, "the nacked item's second delivery");
  assert.equal(stats.redelivered, 0, "no delivery was left unfinished: a nack is not a redelivery");
});

test("a retry's deadline and attempt are in storage: they survive a restart, and the alarm is set for them", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("poison", 10, { id: "p" });
  await q.offer("next", 20, { id: "n" });
  clock.advance(20);
  await storage.fire(async () => {
    // A handler that logs and returns: the runtime will not retry this alarm.
    const n = await q.deliver(
      (v) => {
        if (v === "poison") throw new Error("mail server down");
      },
      { retryDelayMs: (attempt) => 5000 * attempt },
    );
    assert.equal(n, 2);
  });
  assert.deepEqual(q.toArray(), [{ id: "p", value: "poison", deadline: T0 + 20 + 5000, attempt: 1 }]);
  assert.equal(storage.alarm, T0 + 20 + 5000, "the retry's alarm");
  const back = await reopen(storage);
  assert.deepEqual(back.toArray(), q.toArray());
  clock.now = storage.alarm - 1;
  const r = recorder();
  assert.equal(await storage.fire(() => back.deliver(r.handler)), 0, "not before its retry deadline");
  clock.now = T0 + 20 + 5000;
  assert.equal(await storage.fire(() => back.deliver(r.handler)), 1);
  assert.deepEqual(
    r.got.map((g) => [g.id, g.attempt]),
    [["p", 2]],
  );
});

test("a delivery that never finishes still counts: its attempt is stored before the handler runs", async (t) => {
  const { clock, storage, q } = await fresh(t, { maxAttempts: 2 });
  await q.offer("crashes the object", 10, { id: "x" });
  clock.advance(10);
  let reset;
  const running = q.deliver(async () => {
    // The object is reset (evicted, out of memory) while this runs: storage as it is now.
    reset = storage.clone();
    await new Promise(() => {});
  });
  while (reset === undefined) await tick();
  void running; // never settles: that object is gone
  const second = await DurableDelayQueue.open(reset, { maxAttempts: 2 });
  assert.deepEqual(second.toArray(), [{ id: "x", value: "crashes the object", deadline: T0 + 10, attempt: 1 }]);
  let afterSecond;
  second.deliver(async (_v, job) => {
    assert.equal(job.attempt, 2);
    afterSecond = reset.clone();
    await new Promise(() => {});
  });
  while (afterSecond === undefined) await tick();
  // Its last attempt never finished either: the next alarm buries it without a delivery.
  const third = await DurableDelayQueue.open(afterSecond, { maxAttempts: 2 });
  let called = false;
  assert.equal(
    await afterSecond.fire(() =>
      third.deliver(() => {
        called = true;
      }),
    ),
    0,
  );
  assert.equal(called, false);
  const [letter] = await dead(third);
  assert.equal(letter.id, "x");
  assert.equal(letter.attempt, 2);
  assert.match(letter.reason, /did not finish on attempt 2 of 2/);
  assert.equal(afterSecond.alarm, null);
});

test("retryDelayMs: a function that throws rejects deliver(), and the item stays at its place, its attempt counted", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10, { id: "a" });
  await q.offer("b", 10, { id: "b" });
  clock.advance(10);
  const retryDelayMs = () => {
    throw new Error("bad retry policy");
  };
  await assert.rejects(
    storage.fire(() =>
      q.deliver(
        () => {
          throw new Error("handler failed");
        },
        { retryDelayMs },
      ),
    ),
    /bad retry policy/,
  );
  assert.deepEqual(
    q.toArray().map((i) => [i.id, i.attempt]),
    [
      ["a", 1],
      ["b", 0],
    ],
  );
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
  // A function that returns what is not a finite number: retried at once.
  const seen = [];
  await q.deliver(
    (v, job) => {
      seen.push([v, job.attempt]);
      if (job.attempt === 2) throw new Error("again");
    },
    { retryDelayMs: () => Number.NaN },
  );
  assert.deepEqual(seen, [
    ["a", 2],
    ["b", 1],
    ["a", 3],
  ]);
});

test("a handler may replace its own item (offer with its id): the new item stays, whatever the handler does", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("v1", 10, { id: "x" });
  await q.offer("v1", 10, { id: "y" });
  clock.advance(10);
  await q.deliver(async (_value, job) => {
    await q.offer("v2", 1000, { id: job.id });
    if (job.id === "y") throw new Error("fails after replacing itself");
  });
  assert.deepEqual(q.toArray(), [
    { id: "x", value: "v2", deadline: T0 + 1010, attempt: 0 },
    { id: "y", value: "v2", deadline: T0 + 1010, attempt: 0 },
  ]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("offers, cancels and reschedules made while a delivery awaits its handler keep storage and alarm right", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const ids = [];
  for (let i = 0; i < 6; i++) ids.push(await q.offer(`v${i}`, 10 * (i + 1)));
  clock.advance(30);
  const delivering = q.deliver(async () => {
    await tick();
    await tick();
  });
  const others = Promise.all([
    q.offer("new-head", -100),
    q.cancel(ids[4]),
    q.reschedule(ids[5], 5),
    q.offer("later", 1000),
  ]);
  await Promise.all([delivering, others]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
  const left = values(q);
  assert.ok(!left.includes("v0") && !left.includes("v4"), `${left}`);
  assert.ok(left.includes("v5") && left.includes("later"), `${left}`);
  assert.equal(alarmFor(q.toArray()[0].deadline), storage.alarm);
});

test("a value is copied when offered and when handed out: no caller changes what memory or storage holds", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const order = { id: 42, lines: ["tea"] };
  await q.offer(order, 10);
  order.lines.push("cake");
  assert.deepEqual(q.peek(), { id: 42, lines: ["tea"] });
  await assertAgrees(q, storage);
  q.peek().lines.push("from peek");
  q.toArray()[0].value.lines.push("from toArray");
  clock.advance(10);
  await q.deliver(
    (value, job) => {
      value.lines.push("from a handler that fails");
      job.value.lines.push("through the job");
      throw new Error("failed");
    },
    { retryDelayMs: 1000 },
  );
  clock.advance(1000);
  const r = recorder();
  await q.deliver(r.handler);
  assert.deepEqual(r.values(), [{ id: 42, lines: ["tea"] }]);
});

test("values: what structured clone holds (a Map, a Date, a bigint, a cycle) comes back as it went in", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const cyclic = { name: "loop" };
  cyclic.self = cyclic;
  const value = {
    when: new Date(T0),
    tags: new Map([["a", 1n]]),
    set: new Set([1, 2]),
    cyclic,
    bytes: new Uint8Array([1, 2]),
  };
  await q.offer(value, 0);
  await assertAgrees(q, storage);
  const back = await reopen(storage);
  clock.advance(1);
  const r = recorder();
  await back.deliver(r.handler);
  const [got] = r.values();
  assert.deepEqual(got, value);
  assert.equal(got.cyclic.self, got.cyclic);
});

// ---- what storage holds --------------------------------------------------------------------

test("the order, attempts and dead letters read back after a restart are what memory held, FIFO ties included", async (t) => {
  const { clock, storage, q } = await fresh(t, { maxAttempts: 1 });
  await q.offer("c", 300);
  await q.offerAt("a", T0 + 100);
  await q.offer("b1", 200);
  await q.offerAt("b2", new Date(T0 + 200));
  await q.offerMany([{ value: "b3", delayMs: 200 }]);
  await q.offer("dies first", 0, { id: "d1" });
  await q.offer("dies second", 0, { id: "d2" });
  await q.deliver(() => {
    throw new Error("no");
  });
  assert.deepEqual(values(q), ["a", "b1", "b2", "b3", "c"]);
  const back = await reopen(storage, { maxAttempts: 1 });
  assert.deepEqual(back.toArray(), q.toArray());
  assert.deepEqual(await dead(back), await dead(q));
  assert.deepEqual(
    (await dead(back)).map((d) => d.id),
    ["d1", "d2"],
  );
  // A cursor from before the restart pages on after it.
  const { next } = await q.deadLetters({ limit: 1 });
  assert.deepEqual(
    (await back.deadLetters({ after: next })).items.map((d) => d.id),
    ["d2"],
  );
  clock.advance(1000);
  const r = recorder();
  await back.deliver(r.handler);
  assert.deepEqual(r.values(), ["a", "b1", "b2", "b3", "c"]);
});

test("offerMany and purgeDead: one transaction each, in put and delete calls of at most 128 keys", async (t) => {
  const { clock, storage, q } = await fresh(t, { maxAttempts: 1 });
  const before = storage.calls.length;
  const ids = await q.offerMany(Array.from({ length: 300 }, (_, i) => ({ value: i, delayMs: i % 7, id: `i${i}` })));
  const calls = storage.calls.slice(before);
  assert.deepEqual(
    calls.filter((c) => c === "transaction"),
    ["transaction"],
  );
  assert.deepEqual(
    calls.filter((c) => c.startsWith("txn.put")),
    ["txn.put", "txn.put", "txn.put"],
  );
  assert.equal(ids.length, 300);
  clock.advance(10);
  await q.deliver(() => {
    throw new Error("no");
  });
  assert.equal((await q.stats()).dead, 300);
  const mark = storage.calls.length;
  assert.equal(await q.purgeDead(), 300);
  assert.deepEqual(storage.calls.slice(mark), ["txn.delete", "txn.delete", "txn.delete", "transaction"]);
  assert.deepEqual(storage.dump().entries, [["tarry:next", 600]]);
});

test("ifExists extend: an item extended in place keeps its place among equal deadlines", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offer("a", 100, { id: "a" });
  await q.offer("b", 100, { id: "b" });
  await q.offer("a, new value", 50, { id: "a", ifExists: "extend" });
  assert.deepEqual(q.toArray(), [
    { id: "a", value: "a, new value", deadline: T0 + 100, attempt: 0 },
    { id: "b", value: "b", deadline: T0 + 100, attempt: 0 },
  ]);
  await q.offer("a, later", 100.5, { id: "a", ifExists: "extend" });
  assert.deepEqual(values(q), ["b", "a, later"]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("open: a storage written before string ids and attempts (numeric keys, no attempt) reads back as ids with attempt 0", async (t) => {
  const clock = manualClock(t);
  const storage = new FakeStorage();
  await storage.put({
    "tarry:item:0": { value: "old a", deadline: T0 + 10, seq: 0 },
    "tarry:item:1": { value: "old b", deadline: T0 + 10, seq: 1 },
    "tarry:next": 2,
  });
  const q = await open(storage);
  assert.deepEqual(q.toArray(), [
    { id: "0", value: "old a", deadline: T0 + 10, attempt: 0 },
    { id: "1", value: "old b", deadline: T0 + 10, attempt: 0 },
  ]);
  assert.equal(storage.alarm, T0 + 10);
  clock.advance(10);
  const r = recorder();
  await storage.fire(() => q.deliver(r.handler));
  assert.deepEqual(
    r.got.map((g) => [g.id, g.value, g.attempt]),
    [
      ["0", "old a", 1],
      ["1", "old b", 1],
    ],
  );
});

test("open: storage that does not hold tarry items is refused, naming the key, and nothing is written", async () => {
  const bad = [
    ["tarry:item:0", null],
    ["tarry:item:0", 5],
    ["tarry:item:0", { deadline: "soon", seq: 0, value: 1 }],
    ["tarry:item:0", { deadline: 1, seq: 0.5, value: 1 }],
    ["tarry:item:0", { deadline: 1, seq: 0 }],
    ["tarry:item:0", { deadline: 1, seq: 0, value: 1, attempt: -1 }],
    ["tarry:item:", { deadline: 1, seq: 0, value: 1 }],
    ["tarry:item:\uD800", { deadline: 1, seq: 0, value: 1 }],
    ["tarry:dead:x", { deadline: 1, seq: 0, value: 1, attempt: 1, diedAt: 5 }],
    ["tarry:dead:x", { deadline: 1, seq: 0, value: 1, attempt: 1, reason: "r" }],
    ["tarry:next", -1],
  ];
  for (const [key, value] of bad) {
    const storage = new FakeStorage();
    await storage.put(key, value);
    const before = storage.dump();
    await assert.rejects(
      DurableDelayQueue.open(storage),
      { name: "TypeError", message: new RegExp(JSON.stringify(key).replace(/[\\[\]]/g, "\\$&")) },
      `${key}: ${JSON.stringify(value)}`,
    );
    assert.deepEqual(storage.dump(), before);
  }
});

test("prefix: two prefixes keep their items apart in one storage", async (t) => {
  manualClock(t);
  const storage = new FakeStorage();
  await storage.put("user-data", { mine: true });
  const q = await open(storage, { prefix: "jobs/" });
  await q.offer("job", 10, { id: "j" });
  assert.deepEqual(
    storage
      .dump()
      .entries.map(([k]) => k)
      .sort(),
    ["jobs/item:j", "jobs/next", "user-data"],
  );
  const other = await DurableDelayQueue.open(storage.clone(), { prefix: "other/" });
  assert.equal(await other.size(), 0);
});

test("peek and toArray (Durable only, from memory): the head and every pending item, copies; nothing when empty", async (t) => {
  const { q } = await fresh(t);
  assert.equal(q.peek(), undefined);
  assert.deepEqual(q.toArray(), []);
  const b = await q.offer({ name: "b" }, 200);
  const a = await q.offer({ name: "a" }, 100);
  assert.deepEqual(q.peek(), { name: "a" }, "the head, though not yet due");
  assert.deepEqual(q.toArray(), [
    { id: a, value: { name: "a" }, deadline: T0 + 100, attempt: 0 },
    { id: b, value: { name: "b" }, deadline: T0 + 200, attempt: 0 },
  ]);
});

// ---- arguments only Durable Objects have -----------------------------------------------------

test("arguments only Durable Objects have: deadlines after 2189, deliver()'s handler and options, open()'s storage and options", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offer("kept", 1000, { id: "kept" });
  const state = async () => ({ items: q.toArray(), dead: await dead(q), stored: storage.dump() });
  const before = await state();
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const T = "TypeError";
  const R = "RangeError";
  const rows = [
    [() => q.offer("x", 1e300), R, /^delayMs\b.*2189/],
    [() => q.offer("x", -1e300), R, /^delayMs\b/],
    [() => q.offerAt("x", Date.UTC(2300, 0, 1)), R, /^deadline\b.*2189/],
    [() => q.offerMany([{ value: "x", deadline: Date.UTC(2300, 0, 1) }]), R, /^items\[0\]\.deadline\b/],
    [() => q.offerMany([{ value: "x", delayMs: 1e300 }]), R, /^items\[0\]\.delayMs\b/],
    [() => q.reschedule("kept", 1e300), R, /^delayMs\b/],
    [() => q.offer(Promise.resolve(1), 1), T, /^value\b/],
    // biome-ignore lint/suspicious/noThenProperty: a thenable is a value this row offers
    [() => q.offer({ then() {} }, 1), T, /^value\.then\b/],
    [() => q.offer(revoked.proxy, 1), T, /^value\b/],
    [() => q.deliver(), T, /^handler\b/],
    [() => q.deliver("f"), T, /^handler\b/],
    [() => q.deliver(() => {}, null), T, /^options\b/],
    [() => q.deliver(() => {}, { retryDelayMs: "1" }), T, /^options\.retryDelayMs\b/],
    [() => q.deliver(() => {}, { retryDelayMs: Number.NaN }), R, /^options\.retryDelayMs\b/],
    [() => q.deliver(() => {}, { retry: 1 }), T, /\bretry\b/],
    [() => DurableDelayQueue.open(), T, /^storage\b/],
    [() => DurableDelayQueue.open(null), T, /^storage\b/],
    [() => DurableDelayQueue.open({ get() {} }), T, /^storage\b/],
    [() => DurableDelayQueue.open(revoked.proxy), T, /^storage\b/],
    [() => DurableDelayQueue.open(storage, "tarry:"), T, /^options\b/],
    [() => DurableDelayQueue.open(storage, { prefix: 1 }), T, /^options\.prefix\b/],
    [() => DurableDelayQueue.open(storage, { maxAttempts: 0 }), R, /^options\.maxAttempts\b/],
    [() => DurableDelayQueue.open(storage, { maxAttempts: 1.5 }), R, /^options\.maxAttempts\b/],
    [() => DurableDelayQueue.open(storage, { prefx: "x" }), T, /\bprefx\b/],
  ];
  for (const [call, name, message] of rows) {
    let result;
    assert.doesNotThrow(() => {
      result = call();
    }, call.toString());
    await assert.rejects(result, { name, message }, call.toString());
    assert.deepEqual(await state(), before, `${call}: changed the queue`);
  }
  assert.throws(() => new DurableDelayQueue(storage), { name: T, message: /open/ });
});

test("null is a value like any other: offered, kept across a restart, delivered; undefined is refused", async (t) => {
  const { storage, q, clock } = await fresh(t);
  await q.offer(null, 100);
  await q.offer({ nested: null }, 200);
  await assert.rejects(q.offer(undefined, 1), TypeError);
  const copy = storage.clone(); // the object restarts
  const back = await open(copy);
  assert.deepEqual(values(back), [null, { nested: null }]);
  clock.advance(200);
  const r = recorder();
  assert.equal(await copy.fire(() => back.deliver(r.handler)), 2);
  assert.deepEqual(r.values(), [null, { nested: null }]);
});
