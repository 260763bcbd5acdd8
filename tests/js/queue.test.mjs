// The DelayQueue as a user imports it: `import { DelayQueue } from "tarry-queue"` (the built
// package, resolved through package.json's exports). Order and "never early" are asserted
// exactly; lateness only with wide margins, because these machines are noisy.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { DelayQueue, Scheduler } from "tarry-queue";

const root = fileURLToPath(new URL("../..", import.meta.url));
const now = () => performance.now();
const LATE = 1500; // generous bound on lateness, in ms

/**
 * Watches the host timers that tarry arms (setTimeout calls made from its js/engine/timer.js),
 * counting those armed at once. `fire()` runs the pending ones by hand.
 */
function watchTimers() {
  const { setTimeout: realSet, clearTimeout: realClear } = globalThis;
  const pending = new Map();
  const w = { armed: 0, maxArmed: 0, arms: 0, delays: [], pending };
  globalThis.setTimeout = (fn, ms, ...args) => {
    if (!new Error().stack.includes("timer.js")) return realSet(fn, ms, ...args);
    let id;
    const run = () => {
      pending.delete(id);
      w.armed--;
      fn(...args);
    };
    id = realSet(run, ms);
    pending.set(id, run);
    w.arms++;
    w.delays.push(ms);
    w.armed++;
    w.maxArmed = Math.max(w.maxArmed, w.armed);
    return id;
  };
  globalThis.clearTimeout = (id) => {
    if (pending.delete(id)) w.armed--;
    return realClear(id);
  };
  w.restore = () => {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  };
  /** Fires every pending tarry timer now (as a host whose timer fired early would). */
  w.fireNow = () => {
    for (const [id, run] of [...pending]) {
      realClear(id);
      run();
    }
  };
  return w;
}

/** Offers items and remembers a lower bound of each deadline. */
function offerAll(q, items) {
  return items.map(([value, delay]) => {
    const earliest = now() + delay;
    const handle = q.offer(value, delay);
    return { value, delay, earliest, handle };
  });
}

test("items come out in deadline order, FIFO among ties, never early", async () => {
  const q = new DelayQueue();
  const offered = offerAll(q, [
    ["c", 40],
    ["a", 10],
    ["b1", 25],
    ["b2", 25],
    ["now", -5],
    ["b3", 25],
  ]);
  assert.equal(q.size, 6);
  const got = [];
  for (let i = 0; i < offered.length; i++) {
    const v = await q.take();
    got.push({ v, at: now() });
  }
  assert.deepEqual(
    got.map((g) => g.v),
    ["now", "a", "b1", "b2", "b3", "c"],
  );
  for (const g of got) {
    const o = offered.find((x) => x.value === g.v);
    assert.ok(g.at >= o.earliest, `${g.v} came ${o.earliest - g.at} ms early`);
    assert.ok(g.at - o.earliest < LATE, `${g.v} came ${g.at - o.earliest} ms late`);
  }
  assert.equal(q.size, 0);
  q.close();
});

test("many concurrent takers are served in call order with items in expiry order", async () => {
  const q = new DelayQueue();
  const takes = Array.from({ length: 50 }, () => q.take());
  // One clock reading for the batch, so the deadlines are exactly now + delay: delays
  // 1 ms apart and ties, whatever the machine's speed.
  const delays = Array.from({ length: 50 }, (_, i) => (i * 37) % 30);
  q.offerMany(
    delays.map((_, i) => i),
    delays,
  );
  const expected = delays
    .map((d, i) => [d, i])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, i]) => i);
  const results = await Promise.all(takes);
  assert.deepEqual(results, expected);
  const { timerArms, earlyWakes } = q.stats;
  assert.ok(timerArms <= 50 + earlyWakes, `arms ${timerArms}: at most one per item (and per early wake)`);
  q.close();
});

test("take with a timeout resolves undefined and loses nothing", async () => {
  const q = new DelayQueue();
  q.offer("later", 3000); // seconds after the timeout: a loaded machine may run the timer late
  const t0 = now();
  assert.equal(await q.take({ timeout: 30 }), undefined);
  assert.ok(now() - t0 >= 29, "timed out early");
  assert.equal(q.size, 1, "the item stays in the queue");
  assert.equal(q.stats.timersArmed, 0, "no timer once nobody waits");
  // A timeout longer than the item's delay gets the item.
  assert.equal(await q.take({ timeout: 5000 }), "later");
  // timeout 0: only what has already expired.
  q.offer("due", -1);
  assert.equal(await q.take({ timeout: 0 }), "due");
  assert.equal(await q.take({ timeout: 0 }), undefined);
  q.close();
});

test("an aborted take rejects with the signal's reason and leaves the item", async () => {
  const q = new DelayQueue();
  q.offer("x", 50);
  const ac = new AbortController();
  const p = q.take({ signal: ac.signal });
  ac.abort(new Error("user gave up"));
  await assert.rejects(p, /user gave up/);
  assert.equal(q.size, 1);
  assert.equal(q.stats.takers, 0);
  await assert.rejects(q.take({ signal: AbortSignal.abort("already") }), (e) => e === "already");
  assert.equal(await q.take(), "x");

  // Abort racing the expiry: either the take got the item, or the item is still queued.
  for (let i = 0; i < 20; i++) {
    q.offer(i, 5);
    const ac2 = new AbortController();
    const p2 = q.take({ signal: ac2.signal });
    await sleep(5);
    ac2.abort();
    const outcome = await p2.then(
      (v) => ["got", v],
      () => ["aborted"],
    );
    if (outcome[0] === "got") {
      assert.equal(outcome[1], i);
      assert.equal(q.size, 0);
    } else {
      assert.equal(q.size, 1);
      assert.equal(await q.take(), i, "the item was not lost");
    }
  }
  q.close();
});

test("a new earlier head re-arms the timer", async () => {
  const w = watchTimers();
  try {
    const q = new DelayQueue();
    q.offer("far", 60_000);
    const t0 = now();
    const p = q.take();
    assert.equal(w.armed, 1);
    q.offer("near", 20);
    assert.equal(w.armed, 1, "re-armed, not a second timer");
    assert.equal(await p, "near");
    assert.ok(now() - t0 >= 19.9 && now() - t0 < LATE);
    q.close();
    assert.equal(w.armed, 0, "close disarms");
  } finally {
    w.restore();
  }
});

test("cancelling or rescheduling the head re-arms for the new head", async () => {
  const q = new DelayQueue();
  const a = q.offer("a", 20);
  const b0 = now();
  q.offer("b", 60);
  const p = q.take();
  assert.equal(q.cancel(a), "a");
  assert.equal(await p, "b");
  assert.ok(now() >= b0 + 60, "b came early");

  const c0 = now();
  const c = q.offer("c", 10);
  q.offer("d", 40);
  const p2 = q.take();
  assert.equal(q.reschedule(c, 80), true);
  assert.equal(await p2, "d");
  assert.ok(now() >= c0 + 40);
  assert.equal(await q.take(), "c");
  assert.ok(now() >= c0 + 80, "rescheduled item came early");
  q.close();
});

test("a stale or unknown handle never reaches another item", () => {
  const q = new DelayQueue();
  const h1 = q.offer("one", -1);
  assert.equal(q.poll(), "one");
  const h2 = q.offer("two", 100); // reuses the freed slot
  assert.notEqual(h1, h2);
  assert.equal(q.cancel(h1), undefined);
  assert.equal(q.reschedule(h1, 5), false);
  assert.equal(q.delayOf(h1), undefined);
  for (const unknown of [0, 1, 2 ** 26 - 1, 2 ** 53 - 1, h1 + 1, h2 + 2 ** 26]) {
    assert.equal(q.cancel(unknown), undefined);
    assert.equal(q.delayOf(unknown), undefined);
  }
  assert.equal(q.size, 1);
  assert.ok(q.delayOf(h2) > 90 && q.delayOf(h2) <= 100);
  assert.equal(q.cancel(h2), "two");
  assert.equal(q.cancel(h2), undefined);
  const kept = q.offer("kept", 100);
  q.clear();
  assert.equal(q.cancel(kept), undefined, "cleared handles are stale");
  assert.ok(Number.isSafeInteger(kept) && kept > 0);
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

test("keepAlive: false lets Node exit while a take waits; the default keeps it alive", () => {
  const run = (code) => {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: root,
      encoding: "utf8",
      timeout: 20_000,
    });
    return { ...r, ms: Date.now() - t0 };
  };
  const unref = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue({ keepAlive: false });
    q.offer("x", 60_000);
    q.take().then((v) => console.log("took", v));
    console.log("waiting");`);
  assert.equal(unref.status, 0, unref.stderr);
  assert.equal(unref.stdout.trim(), "waiting");
  assert.ok(unref.ms < 10_000, `exited after ${unref.ms} ms`);

  const kept = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue();
    const t0 = performance.now();
    q.offer("x", 300);
    q.take().then((v) => console.log("took", v, performance.now() - t0 >= 300));`);
  assert.equal(kept.status, 0, kept.stderr);
  assert.equal(kept.stdout.trim(), "took x true");
});

test("a take waiting on an empty queue keeps Node running, for await too; keepAlive: false lets it exit", () => {
  const run = (code) =>
    spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: root, encoding: "utf8", timeout: 20_000 });
  // The producer's timer is unref'd: only the waiting take can keep the process running
  // until it fires (a top-level await that never settles exits with code 13).
  const awaited = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue();
    setTimeout(() => q.offer("late", 0), 300).unref();
    console.log("took", await q.take(), q.stats.timersArmed);`);
  assert.equal(awaited.status, 0, awaited.stderr);
  assert.equal(awaited.stdout.trim(), "took late 0", "served, and no timer was armed for the wait");

  const looped = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue();
    q.offer(1, 0);
    q.offer(2, 20);
    setTimeout(() => q.offer(3, 0), 300).unref();
    const seen = [];
    for await (const x of q) {
      seen.push(x);
      if (x === 3) q.close();
    }
    console.log(seen.join(","));`);
  assert.equal(looped.status, 0, looped.stderr);
  assert.equal(looped.stdout.trim(), "1,2,3", "the loop waited on the empty queue for the third item");

  // Once nothing waits (served, timed out, aborted, closed), the process ends as before.
  const free = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue({ capacity: 1 });
    await q.take({ timeout: 10 });
    const ac = new AbortController();
    const aborted = q.take({ signal: ac.signal }).catch((e) => e.name);
    ac.abort();
    console.log(await aborted);
    q.offer("full", 60_000);
    const put = q.put("waits for room", 0);
    q.take().catch(() => {});
    q.close();
    console.log(await put.catch((e) => e.name));`);
  assert.equal(free.status, 0, free.stderr);
  assert.equal(free.stdout.trim(), "AbortError\nClosedError");

  const unref = run(`import { DelayQueue } from "tarry-queue";
    const q = new DelayQueue({ keepAlive: false });
    setTimeout(() => q.offer("late", 0), 300).unref();
    q.take().then((v) => console.log("took", v));
    console.log("waiting");`);
  assert.equal(unref.status, 0, unref.stderr);
  assert.equal(unref.stdout.trim(), "waiting", "keepAlive: false: the process exits, the take unserved");
});

test("close() rejects waiting takes and puts, disarms the timer, and frees the queue", async () => {
  const w = watchTimers();
  try {
    const q = new DelayQueue({ capacity: 1 });
    q.offer("a", 10_000);
    const take = q.take();
    const put = q.put("b", 5);
    assert.equal(w.armed, 1);
    q.close();
    await assert.rejects(take, { name: "ClosedError" });
    await assert.rejects(put, { name: "ClosedError" });
    assert.equal(w.armed, 0);
    assert.equal(q.closed, true);
    assert.equal(q.size, 0);
    assert.throws(() => q.offer("c", 1), { name: "ClosedError" });
    assert.throws(() => q.poll(), { name: "ClosedError" });
    await assert.rejects(q.take(), { name: "ClosedError" });
    q.close(); // idempotent
    const d = new DelayQueue();
    d[Symbol.dispose]();
    assert.equal(d.closed, true);
  } finally {
    w.restore();
  }
});

test("for await takes items as they expire and ends at close()", async () => {
  const q = new DelayQueue();
  offerAll(q, [
    [3, 30],
    [1, 10],
    [2, 20],
  ]);
  const seen = [];
  for await (const item of q) {
    seen.push(item);
    if (seen.length === 3) setTimeout(() => q.close(), 10);
  }
  assert.deepEqual(seen, [1, 2, 3]);
});

test("at most one host timer per queue, whatever the items and takers", async () => {
  const w = watchTimers();
  try {
    const q = new DelayQueue();
    const takes = Array.from({ length: 20 }, () => q.take());
    for (let i = 0; i < 2000; i++) {
      const h = q.offer(i, (i * 7919) % 40);
      if (i % 3 === 0) q.reschedule(h, (i * 104729) % 50);
      if (i % 5 === 0) q.cancel(h);
      assert.ok(w.armed <= 1);
    }
    await Promise.all(takes);
    const rest = [];
    while (q.size) rest.push(await q.take());
    assert.equal(w.maxArmed, 1, "never two timers at once");
    // 2000 items over 50 ms: the arms follow the wake-ups (a few per ms at most), not the items.
    assert.ok(w.arms <= 3 * 50 + q.stats.earlyWakes, `arms ${w.arms} for 2000 items`);
    assert.equal(w.armed, 0);
    q.close();
  } finally {
    w.restore();
  }
});

test("a delay beyond 2^31-1 ms is chained, never early, without TimeoutOverflowWarning", async () => {
  const warnings = [];
  const onWarning = (wn) => warnings.push(wn.name);
  process.on("warning", onWarning);
  const w = watchTimers();
  try {
    const q = new DelayQueue();
    const month = 30 * 24 * 3600 * 1000;
    q.offer("in a month", month);
    const take = q.take({ timeout: 2 ** 32 });
    assert.deepEqual(w.delays, [2 ** 31 - 1], "armed for the host's longest wait");
    // The host wakes after 24.8 days (simulated by firing it now): nothing is due yet.
    w.fireNow();
    w.fireNow();
    assert.equal(q.stats.earlyWakes, 2);
    assert.equal(q.size, 1);
    assert.equal(w.armed, 1, "re-armed, still one timer");
    assert.deepEqual(w.delays, [2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1]);
    q.offer("x", 1);
    assert.equal(await take, "x");
    q.close();
    await sleep(10);
    assert.deepEqual(
      warnings.filter((n) => n === "TimeoutOverflowWarning"),
      [],
    );
  } finally {
    w.restore();
    process.off("warning", onWarning);
  }
});

test("a timer that fires early hands nothing out early", async () => {
  const w = watchTimers();
  try {
    const q = new DelayQueue();
    const earliest = now() + 50;
    q.offer("x", 50);
    const p = q.take();
    w.fireNow(); // the host fires 50 ms early
    assert.equal(q.size, 1);
    assert.equal(q.stats.earlyWakes, 1);
    assert.equal(await p, "x");
    assert.ok(now() >= earliest);
    q.close();
  } finally {
    w.restore();
  }
});

test("time is monotonic: a wall-clock jump fires nothing early", async () => {
  const realNow = Date.now;
  const q = new DelayQueue();
  try {
    const earliest = now() + 60;
    q.offer("x", 60);
    Date.now = () => realNow() + 3600_000; // the system clock jumps an hour ahead
    assert.equal(q.poll(), undefined);
    assert.equal(await q.take(), "x");
    assert.ok(now() >= earliest);
  } finally {
    Date.now = realNow;
    q.close();
  }
});

test("offerAt takes a wall-clock deadline as a Date or epoch ms; equal ones stay FIFO", async () => {
  const q = new DelayQueue();
  // Equal wall-clock deadlines offered across Date.now() ticks keep their order.
  const at = Date.now() + 5;
  const ties = Array.from({ length: 200 }, (_, i) => i);
  for (const i of ties) {
    q.offerAt(`tie${i}`, at);
    if (i % 20 === 0) await sleep(1);
  }
  const got = [];
  for (const _i of ties) got.push(await q.take());
  assert.deepEqual(
    got,
    ties.map((i) => `tie${i}`),
  );
  assert.ok(Date.now() >= at, "never before the wall-clock deadline");

  q.offerAt("date", new Date(Date.now() + 40));
  q.offerAt("epoch", Date.now() + 20);
  q.offerAt("past", Date.now() - 1000);
  assert.equal(q.poll(), "past");
  assert.equal(await q.take(), "epoch");
  assert.equal(await q.take(), "date");
  q.close();
});

test("a bounded queue: offer returns null, add throws, put waits for room", async () => {
  const q = new DelayQueue({ capacity: 2 });
  assert.equal(q.remainingCapacity, 2);
  q.offer("a", -1);
  q.offer("b", 1000);
  assert.equal(q.remainingCapacity, 0);
  assert.equal(q.offer("c", 1), null);
  assert.throws(() => q.add("c", 1), RangeError);
  assert.equal(q.size, 2);
  let done = false;
  const put = q.put("c", -1).then((h) => ((done = true), h));
  const ac = new AbortController();
  const aborted = q.put("never", 1, { signal: ac.signal });
  await sleep(5);
  assert.equal(done, false);
  ac.abort(new Error("stop"));
  await assert.rejects(aborted, /stop/);
  assert.equal(q.poll(), "a"); // makes room: the first put gets in
  assert.equal(typeof (await put), "number");
  assert.deepEqual(q.toArray(), ["c", "b"]);
  assert.equal(q.poll(), "c");
  assert.equal(q.size, 1, "the aborted put added nothing");
  assert.equal(new DelayQueue().remainingCapacity, Infinity);
  q.close();
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

test("peek, element, drain, toArray, clear", () => {
  const q = new DelayQueue();
  assert.equal(q.peek(), undefined);
  assert.throws(() => q.element(), RangeError);
  q.offer("later", 10_000);
  q.offer("b", -5);
  q.offer("a", -10);
  q.offer("c", -5);
  assert.equal(q.peek(), "a");
  assert.equal(q.element(), "a");
  assert.deepEqual(q.toArray(), ["a", "b", "c", "later"]);
  assert.equal(q.size, 4, "toArray is non-destructive");
  assert.deepEqual(q.drain(2), ["a", "b"]);
  assert.deepEqual(q.drain(), ["c"]);
  assert.deepEqual(q.drain(), []);
  assert.equal(q.size, 1);
  q.clear();
  assert.equal(q.size, 0);
  assert.deepEqual(q.toArray(), []);
  q.close();
});

test("stats tell what the queue and its timer are doing", async () => {
  const q = new DelayQueue();
  q.offer(1, 5);
  q.offer(2, 10);
  const s0 = q.stats;
  assert.deepEqual(Object.keys(s0).sort(), [
    "delivered",
    "earlyWakes",
    "latenessMax",
    "latenessP50",
    "latenessP99",
    "size",
    "takers",
    "timerArms",
    "timersArmed",
    "wakes",
  ]);
  assert.equal(s0.size, 2);
  assert.equal(s0.timersArmed, 0);
  await q.take();
  await q.take();
  const s = q.stats;
  assert.equal(s.timersArmed, 0);
  assert.ok(s.timerArms >= 1 && s.wakes >= 1);
  assert.ok(s.delivered >= 1);
  assert.ok(s.latenessP50 >= 0 && s.latenessP99 >= s.latenessP50 && s.latenessMax < LATE);
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

test("CommonJS require() works on Node >= 20.19", () => {
  const r = spawnSync(
    process.execPath,
    [
      "-e",
      `const { DelayQueue } = require("tarry-queue"); const q = new DelayQueue(); q.offer(1, -1); console.log(q.poll());`,
    ],
    { cwd: root, encoding: "utf8" },
  );
  assert.equal(r.stderr.replace(/.*ExperimentalWarning.*\n?|.*--trace-warnings.*\n?/g, ""), "");
  assert.equal(r.stdout.trim(), "1");
});

test("offerMany adds a batch with one clock reading, all or nothing", async () => {
  const q = new DelayQueue({ capacity: 5 });
  const earliest = now();
  // c is due long after the drain below, however slow the machine; it is moved to now at the end.
  const hs = q.offerMany(["c", "a", "b"], [60_000, 10, 20]);
  assert.equal(hs.length, 3);
  assert.ok(hs.every(Number.isSafeInteger));
  assert.equal(q.cancel(hs[2]), "b");
  assert.deepEqual(q.toArray(), ["a", "c"]);
  assert.equal(await q.take(), "a");
  assert.ok(now() >= earliest + 10);
  assert.deepEqual(q.offerMany(["x", "y"], -1).length, 2);
  assert.deepEqual(q.drain(), ["x", "y"]);
  const before = q.toArray().join();
  for (const [call, type, name] of [
    [() => q.offerMany(["p", undefined], [1, 2]), TypeError, /values\[1\]/],
    [() => q.offerMany(["p", "q"], [1, NaN]), RangeError, /delays\[1\]/],
    [() => q.offerMany(["p", "q"], [1, "2"]), TypeError, /delays\[1\]/],
    [() => q.offerMany(["p", "q"], [1]), RangeError, /delays/],
    [() => q.offerMany("pq", 1), TypeError, /values/],
    [() => q.offerMany(["p"], {}), TypeError, /delays/],
    [() => q.offerMany(["p", "q", "r", "s", "t"], 1), RangeError, /does not fit/],
  ]) {
    assert.throws(call, (e) => e instanceof type && name.test(e.message), String(call));
    assert.equal(q.toArray().join(), before, `${call} changed the queue`);
  }
  assert.equal(q.reschedule(hs[0], 0), true);
  assert.deepEqual(await q.take(), "c");
  q.close();
});

test("null is a value like any other: offered, taken, polled, cancelled, snapshotted; undefined is refused", async () => {
  const q = new DelayQueue();
  const h = q.offer(null, 60_000);
  assert.equal(q.size, 1);
  assert.equal(q.peek(), null);
  assert.equal(q.cancel(h), null, "cancel gives the value back: null");
  assert.equal(q.cancel(h), undefined, "and undefined once it is gone");
  q.offer(null, 0);
  assert.equal(q.poll(), null);
  assert.equal(q.poll(), undefined, "nothing left: undefined, not null");
  q.offer(null, 5);
  assert.equal(await q.take(), null);
  assert.equal(await q.take({ timeout: 1 }), undefined, "a timed-out take: undefined");
  q.offerMany([null, 1], 0);
  q.add(null, 0);
  assert.equal(await q.put(null, 0).then((x) => typeof x), "number");
  q.offerAt(null, Date.now());
  q.offer({ nested: null }, 60_000);
  assert.deepEqual(q.drain(), [null, 1, null, null, null]);
  const r = DelayQueue.restore(JSON.parse(JSON.stringify(q.snapshot())));
  assert.deepEqual(r.toArray(), [{ nested: null }]);
  const s = DelayQueue.restore({ version: 1, size: 1, items: [{ value: null, deadline: 0 }] });
  assert.equal(s.poll(), null);
  for (const call of [() => q.offer(undefined, 1), () => q.add(undefined, 1), () => q.offerAt(undefined, 0)]) {
    assert.throws(call, { name: "TypeError", message: /value must not be undefined/ });
  }
  await assert.rejects(q.put(undefined, 1), { name: "TypeError", message: /value must not be undefined/ });
  assert.equal(q.size, 1);
  for (const x of [q, r, s]) x.close();
});

test("take() and put() never throw: a bad argument or option rejects their Promise", async () => {
  const q = new DelayQueue({ capacity: 1, keepAlive: false });
  q.offer("kept", 60_000);
  const calls = [
    [() => q.take({ timeout: -5 }), RangeError, /^options\.timeout must not be negative, got -5$/],
    [
      () => q.take({ timeout: Number.NaN }),
      RangeError,
      /^options\.timeout must be a finite number of milliseconds, got NaN$/,
    ],
    [() => q.take({ timeout: "5" }), TypeError, /^options\.timeout must be a number/],
    [() => q.take(5), TypeError, /^options must be an object/],
    [() => q.take({ signal: {} }), TypeError, /^options\.signal must be an AbortSignal/],
    [() => q.take({ timeot: 5 }), TypeError, /options\.timeot is not an option of take\(\); did you mean timeout\?/],
    [() => q.put(undefined, 1), TypeError, /value must not be undefined/],
    [() => q.put("x", Number.NaN), RangeError, /delayMs/],
    [() => q.put("x", 1, { signal: 5 }), TypeError, /options\.signal/],
    [() => q.put("x", 1, { sigal: 5 }), TypeError, /options\.sigal is not an option of put\(\); did you mean signal\?/],
  ];
  for (const [call, type, message] of calls) {
    let p;
    assert.doesNotThrow(() => {
      p = call();
    }, String(call));
    assert.ok(p instanceof Promise, String(call));
    await assert.rejects(p, (e) => e instanceof type && message.test(e.message), String(call));
  }
  assert.deepEqual([q.size, q.stats.takers, q.stats.timersArmed], [1, 0, 0], "nothing changed");
  q.close();
});

test("unknown options are refused, naming the option and the one meant", () => {
  const meant = (key, near) => new RegExp(`^options\\.${key} is not an option of .*; did you mean ${near}\\?$`);
  assert.throws(() => new DelayQueue({ capcity: 2 }), {
    name: "TypeError",
    message: "options.capcity is not an option of DelayQueue; did you mean capacity?",
  });
  assert.throws(() => new DelayQueue({ keepalive: false }), { message: meant("keepalive", "keepAlive") });
  assert.throws(() => new DelayQueue({ Clock: () => 0 }), { message: meant("Clock", "clock") });
  assert.throws(() => new DelayQueue({ capacity: 2, maxSize: 3 }), {
    name: "TypeError",
    message: "options.maxSize is not an option of DelayQueue (its options: capacity, keepAlive, clock)",
  });
  assert.throws(() => new DelayQueue({ "max size": 3 }), { message: /^options\["max size"\] is not an option/ });
  assert.throws(() => new DelayQueue({ capcity: undefined }), { message: meant("capcity", "capacity") });
  const snap = { version: 1, size: 0, items: [] };
  assert.throws(() => DelayQueue.restore(snap, { capaciti: 3 }), { message: meant("capaciti", "capacity") });
  // Symbols and inherited keys are not options: they are not read either.
  const q = new DelayQueue(Object.assign(Object.create({ inherited: 1 }), { [Symbol("s")]: 1 }));
  q.close();
});

test("an option set to undefined is that option's default", async () => {
  const q = new DelayQueue({ capacity: undefined, keepAlive: undefined, clock: undefined });
  assert.equal(q.remainingCapacity, Infinity);
  q.offer("a", 0);
  assert.equal(await q.take({ signal: undefined, timeout: undefined }), "a");
  assert.equal(typeof (await q.put("b", 0, { signal: undefined })), "number");
  const r = DelayQueue.restore(q.snapshot(), { capacity: undefined, keepAlive: undefined });
  assert.equal(r.size, 1);
  for (const x of [q, r]) x.close();
});

test("a number no call returns as a handle is a TypeError; a whole number that names nothing finds nothing", () => {
  const q = new DelayQueue();
  const h = q.offer("kept", 60_000);
  for (const bad of [1.5, h + 0.5, -1, Number.NaN, Infinity, 2 ** 53, Number.MAX_VALUE]) {
    for (const call of [() => q.cancel(bad), () => q.reschedule(bad, 1), () => q.delayOf(bad)]) {
      assert.throws(call, { name: "TypeError", message: /^handle must be / }, `${call} with ${bad}`);
    }
  }
  for (const none of [0, -0, 2 ** 26 - 1, 2 ** 53 - 1]) {
    assert.equal(q.cancel(none), undefined);
    assert.equal(q.reschedule(none, 1), false);
    assert.equal(q.delayOf(none), undefined);
  }
  assert.equal(q.size, 1);
  assert.equal(q.cancel(h), "kept");
  q.close();
});

test("ids: offer with { id }, then cancel, reschedule and delayOf by it; an id names one item", async () => {
  const q = new DelayQueue({ capacity: 3, clock: () => 1000 }); // a clock that stands still
  const h = q.offer({ orderId: 42 }, 60_000, { id: "order:42" });
  assert.equal(q.delayOf("order:42"), 60_000);
  assert.equal(q.reschedule("order:42", 120_000), true);
  assert.equal(q.delayOf("order:42"), 120_000);
  assert.equal(q.delayOf(h), q.delayOf("order:42"), "the handle names the same item");
  // Offering an id that is present replaces that item, in place: new value, new deadline,
  // behind the items already due then; same handle; no room needed.
  q.offer("tie-first", 50);
  q.offer("full", 60_000);
  assert.equal(q.remainingCapacity, 0);
  assert.equal(q.offer({ orderId: 42, paid: false }, 50, { id: "order:42" }), h);
  assert.equal(q.size, 3);
  assert.deepEqual(q.toArray().slice(0, 2), ["tie-first", { orderId: 42, paid: false }]);
  assert.deepEqual(q.cancel("order:42"), { orderId: 42, paid: false });
  assert.equal(q.cancel("order:42"), undefined);
  assert.equal(q.cancel(h), undefined, "and its handle is stale");
  assert.equal(q.reschedule("order:42", 1), false);
  assert.equal(q.delayOf("order:42"), undefined);
  // An item that leaves (taken, polled, drained, cancelled, cleared) frees its id.
  const a = q.add("a", 0, { id: "a" });
  assert.equal(q.poll(), "a");
  const a2 = q.add("a again", 0, { id: "a" });
  assert.notEqual(a2, a, "a new item under the freed id");
  assert.equal(await q.take(), "a again");
  assert.equal(q.delayOf("a"), undefined);
  assert.equal(typeof (await q.put("p", 0, { id: "p" })), "number");
  assert.deepEqual(q.drain(), ["p"]);
  q.offerAt("at", Date.now() + 60_000, { id: "at" });
  q.clear();
  assert.equal(q.delayOf("at"), undefined);
  q.offer("after clear", 0, { id: "at" });
  assert.equal(q.cancel("at"), "after clear");
  q.close();
  assert.throws(() => q.cancel("a"), { name: "ClosedError" });
});

test("ids: ifExists keep and extend in a full bounded queue, a batch and a waiting put; the handle stays", async () => {
  const q = new DelayQueue({ capacity: 2 });
  const k = q.offer("k", 60_000, { id: "K" });
  const e = q.offer("e", 100, { id: "E" });
  // Full, yet an id present needs no room, whatever ifExists does with it.
  assert.equal(q.offer("k2", 0, { id: "K", ifExists: "keep" }), k);
  assert.equal(q.offerAt("k3", Date.now(), { id: "K", ifExists: "keep" }), k);
  assert.equal(q.add("e2", 200, { id: "E", ifExists: "extend" }), e);
  assert.ok(q.delayOf("E") > 150, "extended to the later deadline");
  assert.equal(q.offer("e3", 50, { id: "E", ifExists: "extend" }), e);
  assert.ok(q.delayOf("E") > 150, "an earlier deadline leaves it");
  assert.deepEqual(q.toArray(), ["e3", "k"], "the new value, always");
  // A batch applies ifExists in order: a repeated id meets what the batch left.
  assert.deepEqual(q.offerMany(["k4", "e4", "e5"], [0, 300, 250], { ids: ["K", "E", "E"], ifExists: "extend" }), [
    k,
    e,
    e,
  ]);
  assert.deepEqual(q.toArray(), ["e5", "k4"]);
  assert.ok(q.delayOf("E") > 250 && q.delayOf("K") > 50_000);
  assert.deepEqual(q.offerMany(["kept?"], 0, { ids: ["K"], ifExists: "keep" }), [k]);
  // A put with an id present resolves at once; one that waits for room meets the item that
  // took its id meanwhile (a put ahead of it in line) as its own ifExists says.
  assert.equal(await q.put("k5", 0, { id: "K", ifExists: "keep" }), k);
  const first = q.put("n first", 60_000, { id: "N" });
  const second = q.put("n second", 0, { id: "N", ifExists: "keep" });
  assert.equal(q.delayOf("N"), undefined, "neither is in yet");
  assert.equal(q.cancel("E"), "e5");
  const n = await first;
  assert.equal(await second, n);
  assert.equal(q.cancel(n), "n first", "kept: the second put changed nothing");
  assert.deepEqual(q.toArray(), ["k4"]);
  q.close();
});

test("ids: offerMany with { ids }, put with { id } waiting for room, all or nothing", async () => {
  const q = new DelayQueue({ capacity: 3 });
  const hs = q.offerMany(["x", "y", "z"], [10, 20, 30], { ids: ["X", undefined, "X"] });
  assert.equal(hs[0], hs[2], "a repeated id replaces the item the batch gave it");
  assert.deepEqual(q.toArray(), ["y", "z"]);
  q.offer("w", 40);
  // Full: a batch of one new item and one replacement does not fit, so nothing changes...
  assert.throws(() => q.offerMany(["new", "X2"], 5, { ids: ["N", "X"] }), {
    name: "RangeError",
    message: /does not fit/,
  });
  assert.deepEqual(q.toArray(), ["y", "z", "w"]);
  // ...while replacements alone need no room.
  assert.deepEqual(q.offerMany(["X3"], 1, { ids: ["X"] }), [hs[0]]);
  assert.deepEqual(q.toArray(), ["X3", "y", "w"]);
  // A put whose id is present replaces at once, though the queue is full; another waits for
  // room, and gets its id when it goes in.
  assert.equal(await q.put("X4", 2, { id: "X" }), hs[0]);
  const waiting = q.put("late", 0, { id: "L" });
  assert.equal(q.delayOf("L"), undefined, "not in yet");
  assert.equal(q.cancel("X"), "X4");
  const hl = await waiting;
  assert.equal(q.delayOf("L") <= 0, true);
  assert.equal(q.cancel("L"), "late");
  assert.equal(q.cancel(hl), undefined);
  q.close();
});
