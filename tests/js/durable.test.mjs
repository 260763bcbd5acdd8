// DurableDelayQueue against a fake Durable Object storage (tests/js/durable-storage.mjs) on a
// clock moved by hand: each public method, the alarm firing early, late and twice, overlapping
// deliveries, failing callbacks and failing storage calls (bad input: tests/bad-input.mjs).
// (tests/js/durable-sweep.test.mjs fails every storage call of every operation in turn.)
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DurableDelayQueue,
  FakeStorage,
  T0,
  alarmFor,
  assertAgrees,
  assertAlarmExact,
  manualClock,
  reopen,
  values,
} from "./durable-helpers.mjs";

const open = (storage, opts) => DurableDelayQueue.open(storage, opts);

/** A clock at T0, an empty storage and a queue on it. */
async function fresh(t) {
  const clock = manualClock(t);
  const storage = new FakeStorage();
  return { clock, storage, q: await open(storage) };
}
/** Lets every other pending task run (a callback that awaits I/O). */
const tick = () => new Promise((r) => setImmediate(r));

/** A deliver() callback that records what it got, awaiting I/O in between. */
function recorder() {
  const got = [];
  const callback = async (value, item) => {
    got.push({ value, ...item });
    await tick();
  };
  return { got, callback, values: () => got.map((g) => g.value) };
}

// ---- the defects of issue 9, item 7 ------------------------------------------------------

test("offer: a failing setAlarm changes nothing; the retry stores one item and sets the alarm", async (t) => {
  const { clock, storage, q } = await fresh(t);
  storage.failOn("setAlarm");
  await assert.rejects(q.offer("a", 1000), { name: "InjectedFailure" });
  assert.equal(q.size, 0);
  assert.deepEqual(storage.dump(), new FakeStorage().dump(), "nothing stored");
  const id = await q.offer("a", 1000);
  assert.deepEqual(values(q), ["a"]);
  assert.equal(storage.alarm, T0 + 1000);
  await assertAgrees(q, storage);
  // And the queue knows the alarm as it is: an earlier offer moves it.
  await q.offer("b", 500);
  assert.equal(storage.alarm, T0 + 500);
  clock.advance(1000);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 2);
  assert.deepEqual(r.values(), ["b", "a"]);
  assert.equal(r.got[1].id, id);
});

test("offerAt: a deadline workerd cannot set an alarm for (<= 0) is simply overdue", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offerAt("epoch", 0);
  await q.offerAt("before 1970", -5000);
  await q.offer("later", 100);
  assert.deepEqual(values(q), ["before 1970", "epoch", "later"]);
  assert.ok(storage.alarm !== null && storage.alarm <= T0, `alarm ${storage.alarm} is not at once`);
  const r = recorder();
  await storage.fire(() => q.deliver(r.callback));
  assert.deepEqual(r.values(), ["before 1970", "epoch"]);
  assertAlarmExact(q, storage);
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
  assert.equal(q.deadlineOf(a), T0 + 100);
  assert.equal(await q.cancel(a), "a");
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
  assert.equal(q.deadlineOf(a), T0 + 300);
  assert.deepEqual(values(q), ["b", "a"]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("deliver: two overlapping calls hand each item out once", async (t) => {
  const { clock, storage, q } = await fresh(t);
  for (const v of ["a", "b", "c"]) await q.offer(v, 10);
  clock.advance(10);
  const r = recorder();
  const counts = await Promise.all([q.deliver(r.callback), q.deliver(r.callback), q.deliver(r.callback)]);
  assert.deepEqual(r.values(), ["a", "b", "c"]);
  assert.equal(
    counts.reduce((a, b) => a + b),
    3,
  );
  assert.equal(q.size, 0);
  assert.equal(storage.alarm, null);
});

test("deliver: a failing delete after the callback keeps the item in memory and storage (delivered again)", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 10);
  clock.advance(10);
  const r = recorder();
  storage.failOn("delete");
  await assert.rejects(
    storage.fire(() => q.deliver(r.callback)),
    { name: "InjectedFailure" },
  );
  assert.deepEqual(values(q), ["a", "b"]);
  await assertAgrees(q, storage);
  assert.ok(storage.alarm !== null, "the alarm stays for the runtime's retry");
  await storage.fire(() => q.deliver(r.callback));
  assert.deepEqual(r.values(), ["a", "a", "b"], "a again: at least once");
  assert.equal(storage.alarm, null);
});

test("a value is copied when offered: changing the caller's object later changes neither memory nor storage", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const order = { id: 42, lines: ["tea"] };
  await q.offer(order, 10);
  order.lines.push("cake");
  assert.deepEqual(q.peek(), { id: 42, lines: ["tea"] });
  await assertAgrees(q, storage);
  q.peek().lines.push("from peek");
  q.toArray()[0].value.lines.push("from toArray");
  clock.advance(10);
  const r = recorder();
  await assert.rejects(
    q.deliver((value) => {
      value.lines.push("from a callback that fails");
      throw new Error("failed");
    }),
    /failed/,
  );
  clock.advance(60_000);
  await q.deliver(r.callback);
  assert.deepEqual(r.values(), [{ id: 42, lines: ["tea"] }]);
});

test("a callback failure leaves the alarm set for a retry, even when alarm() swallows the error", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("poison", 10);
  await q.offer("next", 20);
  clock.advance(20);
  await storage.fire(async () => {
    try {
      await q.deliver(() => {
        throw new Error("mail server down");
      });
    } catch {
      // a handler that logs and returns: the runtime will not retry
    }
  });
  assert.equal(q.size, 2);
  assert.ok(storage.alarm !== null, "no alarm: the items would wait for the next request");
  assert.ok(storage.alarm > clock.now, "the retry waits (backoff), it does not spin");
  clock.now = storage.alarm;
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 2);
  assert.deepEqual(r.values(), ["poison", "next"]);
});

test("a callback that cancels its own item and then throws still leaves the alarm set for the rest", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const a = await q.offer("a", 10);
  await q.offer("b", 5000);
  clock.advance(10);
  await storage.fire(() =>
    q
      .deliver(async () => {
        await q.cancel(a);
        throw new Error("failed after cancelling");
      })
      .catch(() => {}),
  );
  assert.deepEqual(values(q), ["b"]);
  assertAlarmExact(q, storage);
});

test("open: bad storage and options are refused with errors that name them", async () => {
  const storage = new FakeStorage();
  await assert.rejects(DurableDelayQueue.open(), { name: "TypeError", message: /storage/ });
  await assert.rejects(DurableDelayQueue.open({ get() {} }), { name: "TypeError", message: /storage/ });
  await assert.rejects(DurableDelayQueue.open(storage, "tarry:"), { name: "TypeError", message: /options/ });
  await assert.rejects(DurableDelayQueue.open(storage, { prefix: 1 }), { name: "TypeError", message: /prefix/ });
  assert.throws(() => new DurableDelayQueue(storage), /open/);
  assert.deepEqual(storage.calls, []);
});

test("open: storage that does not hold tarry items is refused, naming the key, and nothing is written", async () => {
  for (const value of [null, 5, { deadline: "soon", seq: 0, value: 1 }, { deadline: 1, seq: 0.5, value: 1 }]) {
    const storage = new FakeStorage();
    await storage.put("tarry:item:0", value);
    const before = storage.dump();
    await assert.rejects(DurableDelayQueue.open(storage), /"tarry:item:0"/);
    assert.deepEqual(storage.dump(), before);
  }
  const storage = new FakeStorage();
  await storage.put("tarry:item:x", { deadline: 1, seq: 0, value: 1 });
  await assert.rejects(DurableDelayQueue.open(storage), /"tarry:item:x"/);
});

// ---- each method on its own -----------------------------------------------------------------

test("offer and offerAt: deadline order, FIFO among equal deadlines, the same after a restart", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offer("c", 300);
  await q.offerAt("a", T0 + 100);
  await q.offer("b1", 200);
  await q.offerAt("b2", new Date(T0 + 200));
  await q.offer("b3", 200);
  const order = ["a", "b1", "b2", "b3", "c"];
  assert.deepEqual(values(q), order);
  assert.deepEqual(
    q.toArray().map((i) => i.deadline),
    [100, 200, 200, 200, 300].map((d) => T0 + d),
  );
  const back = await reopen(storage);
  assert.deepEqual(back.toArray(), q.toArray());
  assertAlarmExact(q, storage);
  assert.equal(q.size, 5);
});

test("offerAt: a Date or epoch ms, fractional deadlines keep the alarm from firing early", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const id = await q.offerAt("frac", T0 + 10.25);
  assert.equal(q.deadlineOf(id), T0 + 10.25);
  assert.equal(storage.alarm, T0 + 11, "rounded up, never down");
  clock.now = T0 + 10.2;
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 0, "an alarm before the deadline delivers nothing");
  assert.equal(storage.alarm, T0 + 11);
  clock.now = T0 + 11;
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 1);
  assert.deepEqual(r.got, [{ value: "frac", id, deadline: T0 + 10.25 }]);
});

test("ids: stable across restarts, never reused, even after every item is gone", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const ids = [await q.offer("a", 1), await q.offer("b", 2), await q.offer("c", 3)];
  assert.equal(new Set(ids).size, 3);
  const back = await reopen(storage);
  assert.deepEqual(
    back.toArray().map((i) => i.id),
    ids,
  );
  await q.cancel(ids[1]);
  clock.advance(5);
  await q.deliver(() => {});
  assert.equal(q.size, 0);
  const restarted = await reopen(storage);
  const next = await restarted.offer("d", 1);
  assert.ok(!ids.includes(next), `id ${next} reused`);
  assert.equal(await restarted.cancel(ids[0]), undefined, "an old id names nothing");
});

test("cancel: its value; undefined for an id that names nothing (now or twice); the alarm follows the head", async (t) => {
  const { storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  const b = await q.offer("b", 200);
  const c = await q.offer("c", 300);
  assert.equal(await q.cancel(b), "b");
  assert.equal(await q.cancel(b), undefined);
  assert.equal(await q.cancel(9999), undefined);
  assertAlarmExact(q, storage, "after cancelling a non-head item");
  assert.equal(await q.cancel(a), "a");
  assert.equal(storage.alarm, T0 + 300, "the alarm moves to the new head");
  assert.equal(await q.cancel(c), "c");
  assert.equal(storage.alarm, null, "no alarm for an empty queue");
  assert.equal(q.size, 0);
  assert.equal(q.peek(), undefined);
  await assertAgrees(q, storage);
});

test("reschedule: moves the item, behind items due at the same time; false for an unknown id", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const a = await q.offer("a", 100);
  await q.offer("b", 200);
  await q.offer("c", 300);
  assert.equal(await q.reschedule(a, 200), true);
  assert.deepEqual(values(q), ["b", "a", "c"], "behind b, which was due at the same time first");
  assert.equal(storage.alarm, T0 + 200);
  assert.equal(await q.reschedule(a, 50), true);
  assert.equal(storage.alarm, T0 + 50, "an earlier head moves the alarm earlier");
  assert.equal(q.deadlineOf(a), T0 + 50);
  clock.advance(10);
  assert.equal(await q.reschedule(a, -1000), true, "a negative delay: overdue");
  assert.equal(q.deadlineOf(a), T0 + 10 - 1000);
  assert.equal(await q.reschedule(9999, 10), false);
  const back = await reopen(storage);
  assert.deepEqual(back.toArray(), q.toArray());
  assertAlarmExact(q, storage);
});

test("peek, deadlineOf, toArray: the head, a deadline, every item; copies, and nothing for an empty queue", async (t) => {
  const { storage, q } = await fresh(t);
  assert.equal(q.peek(), undefined);
  assert.deepEqual(q.toArray(), []);
  assert.equal(q.deadlineOf(0), undefined);
  const b = await q.offer({ name: "b" }, 200);
  const a = await q.offer({ name: "a" }, 100);
  assert.deepEqual(q.peek(), { name: "a" }, "the head, though not yet due");
  assert.equal(q.deadlineOf(a), T0 + 100);
  assert.equal(q.deadlineOf(b), T0 + 200);
  assert.equal(q.deadlineOf(12345), undefined);
  assert.deepEqual(q.toArray(), [
    { id: a, value: { name: "a" }, deadline: T0 + 100 },
    { id: b, value: { name: "b" }, deadline: T0 + 200 },
  ]);
  q.peek().name = "changed";
  q.toArray()[1].value.name = "changed";
  assert.deepEqual(
    q.toArray().map((i) => i.value.name),
    ["a", "b"],
  );
  await assertAgrees(q, storage);
});

test("prefix: two prefixes keep their items apart in one storage", async (t) => {
  manualClock(t);
  const storage = new FakeStorage();
  await storage.put("user-data", { mine: true });
  const q = await open(storage, { prefix: "jobs/" });
  await q.offer("job", 10);
  assert.deepEqual(
    storage
      .dump()
      .entries.map(([k]) => k)
      .sort(),
    ["jobs/item:0", "jobs/next", "user-data"],
  );
  const other = await DurableDelayQueue.open(storage.clone(), { prefix: "other/" });
  assert.equal(other.size, 0);
});

// ---- the alarm and deliver() ----------------------------------------------------------------

test("an alarm that fires early delivers nothing and sets the alarm for the head again", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 1000);
  clock.advance(999);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 0);
  assert.deepEqual(r.got, []);
  assert.equal(storage.alarm, T0 + 1000);
  assert.equal(q.size, 1);
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
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 5);
  assert.deepEqual(r.values(), ["a", "b1", "b2", "c", "d"]);
  for (const g of r.got) assert.ok(g.deadline <= clock.now);
  assert.deepEqual(values(q), ["e"]);
  assertAlarmExact(q, storage);
});

test("an alarm that fires twice delivers nothing the second time", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 500);
  clock.advance(10);
  const r = recorder();
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 1);
  assert.equal(await storage.fire(() => q.deliver(r.callback)), 0);
  assert.deepEqual(r.values(), ["a"]);
  assertAlarmExact(q, storage);
});

test("items that come due while a delivery runs wait for the next alarm, which is set at once", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("a", 10);
  await q.offer("b", 20);
  clock.advance(10);
  const r = recorder();
  await storage.fire(() =>
    q.deliver(async (v) => {
      r.got.push({ value: v });
      clock.advance(50);
      await q.offer(`${v}-follow-up`, 0);
    }),
  );
  assert.deepEqual(r.values(), ["a"]);
  assert.deepEqual(values(q), ["b", "a-follow-up"]);
  assert.ok(storage.alarm <= clock.now, "overdue items: the alarm fires at once");
  await assertAgrees(q, storage);
});

test("a callback may cancel or reschedule its own item; deliver then leaves it as that call left it", async (t) => {
  const { clock, storage, q } = await fresh(t);
  const a = await q.offer("cancel me", 10);
  const b = await q.offer("retry me later", 10);
  await q.offer("plain", 10);
  clock.advance(10);
  const seen = [];
  const n = await q.deliver(async (v, { id }) => {
    seen.push(v);
    if (id === a) assert.equal(await q.cancel(id), "cancel me");
    if (id === b) assert.equal(await q.reschedule(id, 1000), true);
  });
  assert.equal(n, 3);
  assert.deepEqual(seen, ["cancel me", "retry me later", "plain"]);
  assert.deepEqual(q.toArray(), [{ id: b, value: "retry me later", deadline: clock.now + 1000 }]);
  await assertAgrees(q, storage);
  assertAlarmExact(q, storage);
});

test("a callback that throws: deliver rejects with its error, the item stays at the head and is delivered again (at least once)", async (t) => {
  const { clock, storage, q } = await fresh(t);
  await q.offer("ok", 10);
  await q.offer("flaky", 20);
  await q.offer("behind", 30);
  clock.advance(30);
  let failures = 0;
  const seen = [];
  const callback = (v) => {
    seen.push(v);
    if (v === "flaky" && failures++ < 2) throw new Error(`flaky failed ${failures}`);
  };
  await assert.rejects(
    storage.fire(() => q.deliver(callback)),
    /flaky failed 1/,
  );
  assert.deepEqual(
    values(q),
    ["flaky", "behind"],
    "delivered items are gone; the failed one and those behind it stay, in order",
  );
  await assertAgrees(q, storage);
  // Retried with backoff: an alarm (or a call) before the retry time delivers nothing.
  const first = storage.alarm;
  assert.ok(first > clock.now);
  assert.equal(await q.deliver(callback), 0);
  clock.now = first;
  await assert.rejects(
    storage.fire(() => q.deliver(callback)),
    /flaky failed 2/,
  );
  assert.ok(storage.alarm - clock.now >= 2 * (first - (T0 + 30)), "the backoff grows");
  clock.now = storage.alarm;
  assert.equal(await storage.fire(() => q.deliver(callback)), 2);
  assert.deepEqual(seen, ["ok", "flaky", "flaky", "flaky", "behind"]);
  assert.equal(storage.alarm, null);
});

test("deliver() called outside an alarm, alongside the alarm: each item once, in order", async (t) => {
  const { clock, storage, q } = await fresh(t);
  for (let i = 0; i < 20; i++) await q.offer(i, i % 3);
  clock.advance(5);
  const r = recorder();
  const fromAlarm = storage.fire(() => q.deliver(r.callback));
  const fromRequest = q.deliver(r.callback);
  const [n1, n2] = await Promise.all([fromAlarm, fromRequest]);
  assert.equal(n1 + n2, 20);
  const expected = Array.from({ length: 20 }, (_, i) => i).sort((x, y) => (x % 3) - (y % 3) || x - y);
  assert.deepEqual(r.values(), expected);
  assert.equal(storage.alarm, null);
});

test("offers, cancels and reschedules made while a delivery awaits its callback keep storage and alarm right", async (t) => {
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

test("a value storage refuses (DataCloneError) rejects offer with a TypeError, and nothing changes", async (t) => {
  const { storage, q } = await fresh(t);
  await q.offer("kept", 10);
  const before = storage.dump();
  await assert.rejects(q.offer({ nested: { fn() {} } }, 5), { name: "TypeError", message: /value/ });
  assert.deepEqual(storage.dump(), before);
  assert.equal(q.size, 1);
  await q.offer("next", 5);
  assertAlarmExact(q, storage);
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
  assert.equal(await copy.fire(() => back.deliver(r.callback)), 2);
  assert.deepEqual(r.values(), [null, { nested: null }]);
});
