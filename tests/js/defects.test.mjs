// The defects found by attacking the package (reentrancy, hostile values, failing hosts,
// clock steps), each kept by a test that failed before its fix.
// biome-ignore-all lint/suspicious/noThenProperty: hostile thenable values are what these tests offer
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { DelayQueue, Scheduler } from "tarry-queue";

test("a thenable value is refused at offer with a TypeError naming the argument", async () => {
  const q = new DelayQueue({ capacity: 4 });
  const thenables = [{ then() {} }, Promise.resolve(1), Object.assign(() => {}, { then() {} })];
  for (const v of thenables) {
    assert.throws(
      () => q.offer(v, 0),
      (e) => e instanceof TypeError && /value/.test(e.message) && /then/.test(e.message),
    );
    assert.throws(() => q.offerAt(v, Date.now()), TypeError);
    assert.throws(
      () => q.offerMany([1, v], 0),
      (e) => e instanceof TypeError && /values\[1\]/.test(e.message),
    );
    await assert.rejects(q.put(v, 0), TypeError); // a Promise method rejects, never throws
  }
  const throwing = {
    get then() {
      throw new Error("hostile getter");
    },
  };
  assert.throws(
    () => q.offer(throwing, 0),
    (e) => e instanceof TypeError && /value/.test(e.message),
  );
  assert.equal(q.size, 0, "nothing was added");
  // A value with a `then` that is not a function is a plain value.
  q.offer({ then: 1 }, 0);
  assert.deepEqual(await q.take(), { then: 1 });
  q.close();
});

test("a value that becomes thenable after offer is not lost: its take rejects and carries it", async () => {
  const q = new DelayQueue();
  const value = { id: 1 };
  q.offer(value, 0);
  value.then = (resolve) => resolve("adopted");
  const e = await q.take().then(
    () => assert.fail("the take adopted the thenable"),
    (err) => err,
  );
  assert.ok(e instanceof TypeError && /then/.test(e.message), String(e));
  assert.equal(e.value, value, "the item is on the error");
  assert.equal(q.size, 0);
  q.offer("next", 0);
  assert.equal(await q.take(), "next", "the queue goes on");
  q.close();
});

test("close() from a then getter during delivery leaves nothing broken", async () => {
  const q = new DelayQueue();
  const value = { id: 1 };
  q.offer(value, 5);
  const taken = q.take();
  let reads = 0;
  Object.defineProperty(value, "then", {
    get() {
      reads++;
      q.close();
      return undefined;
    },
  });
  const errors = [];
  const onError = (e) => errors.push(e);
  process.on("uncaughtException", onError);
  try {
    const outcome = await taken.then(
      (v) => ["resolved", v],
      (e) => ["rejected", e],
    );
    await sleep(20);
    assert.deepEqual(errors, [], "nothing thrown from the timer callback");
    assert.ok(reads >= 1);
    assert.ok(outcome[0] === "resolved" ? outcome[1] === value : outcome[1].name === "ClosedError", String(outcome));
    assert.equal(q.closed, true);
  } finally {
    process.off("uncaughtException", onError);
  }
});

test("serving 10^5 waiting puts and takes at once does not recurse", async () => {
  const n = 100_000;
  const q = new DelayQueue({ capacity: 1 });
  q.offer(-1, 5);
  const puts = [];
  for (let i = 0; i < n; i++) puts.push(q.put(i, -1));
  const takes = [];
  for (let i = 0; i <= n; i++) takes.push(q.take());
  const errors = [];
  const onError = (e) => errors.push(e);
  process.on("uncaughtException", onError);
  try {
    const got = await Promise.all(takes);
    assert.deepEqual(errors, []);
    assert.equal(got.length, n + 1);
    for (let i = 0; i <= n; i++) assert.equal(got[i], i - 1);
    await Promise.all(puts);
    assert.equal(q.size, 0);
  } finally {
    process.off("uncaughtException", onError);
    q.close();
  }
});

test("a host timer that refuses to arm leaves the queue consistent and usable", async () => {
  const realSetTimeout = globalThis.setTimeout;
  const q = new DelayQueue();
  q.offer("later", 20);
  globalThis.setTimeout = () => {
    throw new Error("Disallowed operation called within global scope");
  };
  let p;
  try {
    p = q.take();
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  await assert.rejects(p, /Disallowed operation/);
  assert.equal(q.size, 1, "the item stays");
  assert.equal(q.stats.takers, 0);
  assert.equal(await q.take(), "later", "the queue still works");

  const s = new Scheduler();
  globalThis.setTimeout = () => {
    throw new Error("no timers here");
  };
  try {
    assert.throws(() => s.schedule(() => {}, 10), /no timers here/);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(s.size, 0, "the refused callback was not kept");
  let ran = false;
  s.schedule(() => (ran = true), 1);
  await sleep(30);
  assert.equal(ran, true);
  s.close();
  q.close();
});

test("a handle names nothing in another queue, e.g. one restored from a snapshot", () => {
  const q = new DelayQueue();
  const handles = [];
  for (let i = 0; i < 50; i++) handles.push(q.offer({ orderId: i }, 60_000 + i));
  const r = DelayQueue.restore(q.snapshot());
  for (const h of handles) assert.equal(r.cancel(h), undefined);
  assert.equal(r.size, 50);
  const other = new DelayQueue();
  for (let i = 0; i < 50; i++) other.offer(i, 1000);
  for (const h of handles) {
    assert.equal(other.cancel(h), undefined);
    assert.equal(other.delayOf(h), undefined);
    assert.equal(other.reschedule(h, 1), false);
  }
  assert.equal(other.size, 50);
  for (const h of handles) assert.ok(Number.isSafeInteger(h) && h > 0);
  q.close();
  r.close();
  other.close();
});

test("offerMany reads each element once: getters cannot pass the check and then change", () => {
  const q = new DelayQueue();
  let reads = 0;
  const values = ["a", "b"];
  Object.defineProperty(values, 1, {
    get() {
      return reads++ === 0 ? "b" : undefined;
    },
  });
  const hs = q.offerMany(values, 10);
  assert.equal(reads, 1);
  assert.deepEqual(q.toArray(), ["a", "b"]);
  let dreads = 0;
  const delays = [1, 2];
  Object.defineProperty(delays, 1, {
    get() {
      return dreads++ === 0 ? 2 : NaN;
    },
  });
  const hs2 = q.offerMany(["c", "d"], delays);
  assert.equal(dreads, 1);
  assert.ok(hs.concat(hs2).every((h) => Number.isSafeInteger(h) && h > 0));
  assert.equal(q.size, 4);
  q.close();
});

/** Replaces Date.now by the real wall clock shifted by `shift.ms` (fractional steps allowed). */
function steppableWallClock() {
  const real = Date.now;
  const shift = { ms: 0 };
  Date.now = () => Math.floor(performance.timeOrigin + performance.now() + shift.ms);
  shift.restore = () => (Date.now = real);
  return shift;
}

test("offerAt converts with the clocks as they are at the call: never early after a backward step", () => {
  const shift = steppableWallClock();
  const q = new DelayQueue();
  try {
    for (let i = 0; i < 30; i++) {
      shift.ms = 0;
      q.offerAt("warm", Date.now() - 1);
      q.offerAt("warm", Date.now() - 1);
      q.drain();
      shift.ms = -0.9; // the wall clock steps back 0.9 ms
      const at = Date.now() + 2;
      q.offerAt("x", at);
      for (let v = q.poll(); v !== "x"; v = q.poll()); // spin: the first moment it is due
      assert.ok(Date.now() >= at, `came out ${at - Date.now()} ms before its wall-clock deadline`);
    }
  } finally {
    shift.restore();
    q.close();
  }
});

test("offerAt keeps FIFO for equal wall-clock deadlines across a forward step", async () => {
  const shift = steppableWallClock();
  const q = new DelayQueue();
  try {
    const at = Date.now() + 30;
    q.offerAt("first", at);
    shift.ms = 5; // the wall clock steps 5 ms forward
    q.offerAt("second", at);
    shift.ms = 10;
    q.offerAt("third", at);
    assert.deepEqual([await q.take(), await q.take(), await q.take()], ["first", "second", "third"]);
    assert.ok(Date.now() >= at);
  } finally {
    shift.restore();
    q.close();
  }
});

test("messages: capacity NaN, a Date from another realm, an aborted duck-typed signal", async () => {
  assert.throws(
    () => new DelayQueue({ capacity: NaN }),
    (e) => e instanceof RangeError && /capacity/.test(e.message) && !/must be a number/.test(e.message),
  );
  const { runInNewContext } = await import("node:vm");
  const foreignDate = runInNewContext("new Date(Date.now() - 1000)");
  const q = new DelayQueue();
  q.offerAt("foreign", foreignDate);
  assert.equal(q.poll(), "foreign");
  const duck = { aborted: true, addEventListener() {}, removeEventListener() {} };
  const e = await q.take({ signal: duck }).then(
    () => assert.fail("resolved"),
    (err) => err,
  );
  assert.ok(e !== undefined && e.name === "AbortError", `rejected with ${e}`);
  await assert.rejects(q.put("x", 1, { signal: duck }), { name: "AbortError" });
  q.close();
});

test("restore() refuses what snapshot() refuses: functions and cycles", () => {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  for (const value of [() => 1, cyclic, { nested: [1, () => 2] }]) {
    const snap = { version: 1, size: 1, items: [{ value, deadline: Date.now() }] };
    assert.throws(
      () => DelayQueue.restore(snap),
      (e) => e instanceof TypeError && /items\[0\]\.value/.test(e.message),
    );
  }
});

test("snapshot() of a deeply nested value gives a clear error or a snapshot, never a stack overflow", () => {
  let deep = { leaf: () => 0 };
  for (let i = 0; i < 200_000; i++) deep = { d: deep };
  const q = new DelayQueue();
  q.offer(deep, 1000);
  assert.throws(
    () => q.snapshot(),
    (e) => e instanceof TypeError && /items\[0\]/.test(e.message),
  );
  q.close();
});

test("stats after close(): zeros for both DelayQueue and Scheduler", () => {
  const q = new DelayQueue();
  q.close();
  const s = new Scheduler();
  s.close();
  assert.equal(q.stats.size, 0);
  assert.deepEqual(s.stats, q.stats);
});

test("a refused timer leaves the takes already waiting with a timer, or rejects them with the error", async () => {
  const realSetTimeout = globalThis.setTimeout;
  const q = new DelayQueue();
  q.offer("later", 40);
  const first = q.take(); // arms the timer for 40 ms
  let refusals = 1;
  globalThis.setTimeout = (...args) => {
    if (refusals-- > 0) throw new Error("refused once");
    return realSetTimeout(...args);
  };
  try {
    assert.throws(() => q.offer("sooner", 20), /refused once/); // a new head needs a new timer
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(q.size, 1, "the refused offer added nothing");
  assert.equal(q.stats.timersArmed, 1, "the waiting take has its timer back");
  assert.equal(await first, "later");
  q.close();
});
