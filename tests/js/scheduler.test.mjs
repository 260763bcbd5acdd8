// Scheduler against the built package, as a user imports it. Real timers: order and
// "never early" are asserted exactly, lateness only with wide margins.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Scheduler } from "tarry-queue";
import { watchHostTimers } from "../host-timers.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const now = () => performance.now();
// The test's own waits use the host's setTimeout as it was before any watch below.
const hostSetTimeout = globalThis.setTimeout;
const sleep = (ms) => new Promise((r) => hostSetTimeout(r, ms));
/** Lateness allowed on a noisy 2-core machine; order and never-early are exact. */
const LATE_MS = 2000;

/** Resolves once `s` has no callbacks left (polled; never more than `limit` ms). */
async function settled(s, limit = 5000) {
  const t0 = now();
  while (s.size !== 0) {
    if (now() - t0 > limit) throw new Error(`still ${s.size} callbacks pending after ${limit} ms`);
    await sleep(5);
  }
  await sleep(0);
}

test("runs each callback once, with its arguments, in deadline order, never early", async () => {
  const s = new Scheduler();
  const ran = [];
  const calls = [];
  for (let i = 0; i < 60; i++) {
    const delay = ((i * 7) % 16) * 4; // 0..60 ms, shuffled, with repeats
    const before = now();
    s.schedule((a, b) => ran.push({ i: a, earliest: b, at: now() }), delay, i, before + delay);
    calls.push({ delay, before, after: now() });
  }
  assert.equal(s.size, 60);
  await settled(s);
  const order = ran.map((r) => r.i);
  assert.equal(new Set(order).size, 60, "each ran exactly once");
  // Call i's deadline lies in [before + delay, after + delay]. Wherever those intervals
  // settle the order of two calls (or the later call has the same or a longer delay:
  // a later or equal deadline, FIFO), it must be the order they ran in.
  const pos = new Map(order.map((i, k) => [i, k]));
  let checked = 0;
  for (let i = 0; i < 60; i++) {
    for (let j = i + 1; j < 60; j++) {
      const a = calls[i];
      const b = calls[j];
      if (a.delay <= b.delay || a.after + a.delay < b.before + b.delay) {
        assert.ok(pos.get(i) < pos.get(j), `${i} (delay ${a.delay}) should run before ${j} (delay ${b.delay})`);
        checked++;
      } else if (b.after + b.delay < a.before + a.delay) {
        assert.ok(pos.get(j) < pos.get(i), `${j} (delay ${b.delay}) should run before ${i} (delay ${a.delay})`);
        checked++;
      }
    }
  }
  assert.ok(checked > 1000, `only ${checked} of 1770 pairs had a settled order`);
  for (const r of ran) {
    assert.ok(r.at >= r.earliest, `callback ${r.i} ran ${(r.earliest - r.at).toFixed(3)} ms early`);
    assert.ok(r.at - r.earliest < LATE_MS, `callback ${r.i} ran ${(r.at - r.earliest).toFixed(1)} ms late`);
  }
  s.close();
});

test("equal delays run first in, first out", async () => {
  const s = new Scheduler();
  const ran = [];
  for (let i = 0; i < 50; i++) s.schedule((i) => ran.push(i), 20, i);
  await settled(s);
  assert.deepEqual(ran, [...Array(50).keys()]);
  s.close();
});

test("one host timer for any number of callbacks, none when idle", async () => {
  const w = watchHostTimers();
  try {
    const s = new Scheduler();
    let count = 0;
    for (let i = 0; i < 2000; i++) s.schedule(() => count++, 1 + (i % 40));
    assert.equal(s.stats.timersArmed, 1);
    assert.equal(w.live.size, 1);
    await settled(s);
    assert.equal(count, 2000);
    assert.equal(w.max, 1, "never two host timers at once");
    assert.equal(w.live.size, 0, "no timer once nothing is pending");
    assert.equal(s.stats.timersArmed, 0);
    // 2000 callbacks over 40 distinct deadlines: at most a few arms per deadline.
    assert.ok(s.stats.timerArms < 200, `${s.stats.timerArms} arms`);
    s.close();
  } finally {
    w.restore();
  }
});

test("cancel: the callback never runs; a stale handle cancels nothing", async () => {
  const s = new Scheduler();
  const ran = [];
  const a = s.schedule(() => ran.push("a"), 10);
  const b = s.schedule(() => ran.push("b"), 20);
  const c = s.schedule(() => ran.push("c"), 30);
  assert.equal(s.cancel(a), true); // the head: the timer moves on to b
  assert.equal(s.cancel(a), false);
  assert.equal(s.cancel(c), true);
  assert.equal(s.size, 1);
  const t0 = now();
  await settled(s);
  assert.deepEqual(ran, ["b"]);
  assert.ok(now() - t0 < 20 + LATE_MS);
  assert.equal(s.cancel(b), false, "a handle of a callback that ran is stale");
  const d = s.schedule(() => ran.push("d"), 0);
  assert.notEqual(d, b, "handles are not reused");
  await settled(s);
  assert.deepEqual(ran, ["b", "d"]);
  s.close();
});

test("reschedule: an earlier head wakes the timer earlier, a later one waits", async () => {
  const s = new Scheduler();
  const ran = [];
  const t0 = now();
  const slow = s.schedule(() => ran.push(["slow", now() - t0]), 5000);
  const late = s.schedule(() => ran.push(["late", now() - t0]), 10);
  assert.equal(s.reschedule(slow, 20), true); // the timer was armed for 10 ms, then for 5 s
  assert.equal(s.reschedule(late, 60), true);
  assert.ok(s.delayOf(late) > 50 && s.delayOf(late) <= 60);
  await settled(s);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["slow", "late"],
  );
  assert.ok(ran[0][1] >= 20 && ran[0][1] < 20 + LATE_MS, `slow ran at ${ran[0][1]}`);
  assert.ok(ran[1][1] >= 60, `late ran at ${ran[1][1]}, before 60`);
  assert.equal(s.reschedule(late, 5), false);
  assert.equal(s.delayOf(late), undefined);
  s.close();
});

test("a callback that throws or rejects goes to onerror; the others still run, in order", async () => {
  const errors = [];
  const s = new Scheduler({ onerror: (e) => errors.push(e.message) });
  const ran = [];
  s.schedule(() => ran.push(1), 5);
  s.schedule(() => {
    throw new Error("sync");
  }, 6);
  s.schedule(() => ran.push(2), 7);
  s.schedule(async () => {
    throw new Error("async");
  }, 8);
  s.schedule(() => ran.push(3), 9);
  await settled(s);
  await sleep(10);
  assert.deepEqual(ran, [1, 2, 3]);
  assert.deepEqual(errors, ["sync", "async"]);
  // onerror can be replaced; when it throws itself, console.error gets that.
  const logged = [];
  const original = console.error;
  console.error = (...args) => logged.push(args);
  try {
    s.onerror = () => {
      throw new Error("handler broke");
    };
    s.schedule(() => {
      throw new Error("x");
    }, 0);
    s.schedule(() => ran.push(4), 0);
    await settled(s);
    s.onerror = null; // the default: console.error
    s.schedule(() => {
      throw new Error("y");
    }, 0);
    await settled(s);
  } finally {
    console.error = original;
  }
  assert.deepEqual(ran, [1, 2, 3, 4]);
  assert.equal(logged.length, 2);
  assert.equal(logged[0].at(-1).message, "handler broke");
  assert.equal(logged[1].at(-1).message, "y");
  s.close();
});

test("a long callback delays later ones but never reorders them", async () => {
  const s = new Scheduler();
  const ran = [];
  const t0 = now();
  s.schedule(() => {
    ran.push(["long", now() - t0]);
    const until = now() + 60;
    while (now() < until); // busy for 60 ms
  }, 5);
  s.schedule(() => ran.push(["b", now() - t0]), 10);
  s.schedule(() => ran.push(["c", now() - t0]), 20);
  s.schedule(() => ran.push(["a0", now() - t0]), 5); // ties with long, scheduled after it
  await settled(s);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["long", "a0", "b", "c"],
  );
  assert.ok(ran[2][1] >= 65, "b waited for the long callback");
  s.close();
});

test("a callback rescheduling itself at delay 0 does not starve the event loop", async () => {
  const s = new Scheduler();
  let spins = 0;
  let other = -1;
  const spin = () => {
    if (++spins < 200) s.schedule(spin, 0);
  };
  s.schedule(spin, 0);
  setTimeout(() => (other = spins), 1);
  await settled(s);
  assert.equal(spins, 200);
  assert.ok(other >= 0 && other < 200, `a plain setTimeout ran only after all ${spins} spins`);
  s.close();
});

test("close drops pending callbacks and stops a running wake-up; then schedule throws", async () => {
  const s = new Scheduler();
  const ran = [];
  s.schedule(() => {
    ran.push(1);
    s.close();
  }, 5);
  s.schedule(() => ran.push(2), 5);
  s.schedule(() => ran.push(3), 10);
  await sleep(60);
  assert.deepEqual(ran, [1]);
  assert.equal(s.closed, true);
  assert.equal(s.size, 0);
  assert.throws(() => s.schedule(() => {}, 1), { name: "ClosedError" });
  s.close(); // idempotent
  const t = new Scheduler();
  t.schedule(() => ran.push("never"), 10);
  t[Symbol.dispose ?? Symbol.for("Symbol.dispose")]();
  await sleep(30);
  assert.deepEqual(ran, [1]);
});

test("scheduleAt takes epoch ms or a Date; arguments are checked", async () => {
  const s = new Scheduler();
  const ran = [];
  const at = Date.now() + 30;
  s.scheduleAt((x) => ran.push([x, Date.now()]), new Date(at), "date");
  s.scheduleAt((x) => ran.push([x, Date.now()]), at - 1000, "overdue");
  await settled(s);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["overdue", "date"],
  );
  assert.ok(ran[1][1] >= at, "a wall-clock deadline is not run early");
  assert.throws(() => s.schedule("nope", 1), TypeError);
  assert.throws(() => s.schedule(() => {}, NaN), RangeError);
  assert.throws(() => s.schedule(() => {}, "5"), TypeError);
  assert.throws(() => s.scheduleAt(() => {}, new Date(NaN)), RangeError);
  assert.throws(() => s.cancel("1"), TypeError);
  assert.throws(() => new Scheduler({ keepAlive: "no" }), TypeError);
  assert.throws(() => new Scheduler({ onerror: 1 }), TypeError);
  s.close();
});

test("keepAlive: false does not hold the process open; the default does", () => {
  const run = (code) => {
    const t0 = now();
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: root,
      encoding: "utf8",
      timeout: 20_000,
    });
    return { ...r, ms: now() - t0 };
  };
  const unref = run(`import { Scheduler } from "tarry-queue";
    new Scheduler({ keepAlive: false }).schedule(() => console.log("ran"), 10_000);`);
  assert.equal(unref.status, 0, unref.stderr);
  assert.equal(unref.stdout, "");
  assert.ok(unref.ms < 8000, `exited after ${unref.ms} ms`);
  const held = run(`import { Scheduler } from "tarry-queue";
    new Scheduler().schedule(() => console.log("ran"), 100);`);
  assert.equal(held.status, 0, held.stderr);
  assert.equal(held.stdout, "ran\n");
});
