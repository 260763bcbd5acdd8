// Scheduler#every and #cron on a fake clock and a fake Date (tests/fuzz/host.mjs: a
// monotonic clock the test moves, a wall clock that can step or run on while the
// monotonic one pauses, and a timer host that fires when told and counts live timers),
// plus one run on real timers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scheduler } from "tarry-queue";
import { cron } from "tarry-queue/cron";
import { FakeHost } from "../fuzz/host.mjs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { EARLIEST_INSTANT, LATEST_INSTANT } from "../../js/engine/arguments.js";
import { EveryRule } from "../../js/schedule/rule.js";
import { rng } from "../../bench/rng.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

const T0 = Date.UTC(2026, 5, 1); // a Monday, 00:00Z
const SECOND = 1000;
const HOUR = 3_600_000;

/** A fake host installed for the test, and a scheduler on its clock. */
function setup(t, opts = {}) {
  const host = new FakeHost({ start: 1000, wallBase: T0 - 1000 });
  host.install();
  t.after(() => host.uninstall());
  const errors = [];
  const scheduler = new Scheduler({ clock: host.clock, cron, onerror: (e) => errors.push(e), ...opts });
  t.after(() => scheduler.close());
  /** Fires the timer when due, moving the monotonic clock to it, until the wall clock reaches `wall`. */
  const runUntil = (wall) => {
    for (let guard = 0; guard < 1e7; guard++) {
      assert.ok(host.live.size <= 1, "at most one host timer armed");
      const [timer] = [...host.live.values()].sort((a, b) => a.due - b.due);
      if (timer === undefined) {
        host.now += Math.max(0, wall - Date.now());
        return;
      }
      if (Date.now() + (timer.due - host.now) > wall) {
        host.now += Math.max(0, wall - Date.now());
        return;
      }
      host.now = Math.max(host.now, timer.due);
      host.fire(timer);
    }
    throw new Error("runUntil: too many wake-ups");
  };
  /** The machine sleeps for `ms`: the wall clock runs on, the monotonic clock and its timers stop. */
  const sleep = (ms) => {
    host.wallShift += ms;
  };
  return { host, scheduler, errors, runUntil, sleep };
}

test("every: 10^5 periods on a fake clock, each due at start + k·period exactly, none early, no drift from slow runs", (t) => {
  const { host, scheduler, runUntil } = setup(t);
  const period = 250;
  const start = T0 + 1234;
  const dues = [];
  let early = 0;
  let late = 0;
  // Timers fire 0-3 ms late, as hosts do; each run takes 0-40 ms of the clock.
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  host.jitter = () => Math.floor(rnd() * 4);
  const s = scheduler.every(
    period,
    (due) => {
      const now = Date.now();
      if (now < due.getTime()) early++;
      late = Math.max(late, now - due.getTime());
      dues.push(due.getTime());
      host.now += Math.floor(rnd() * 40);
    },
    { start },
  );
  assert.equal(s.nextRun().getTime(), start);
  runUntil(start + (100_000 - 1) * period + 100);
  assert.equal(dues.length, 100_000);
  for (let k = 0; k < dues.length; k++) {
    if (dues[k] !== start + k * period) assert.fail(`occurrence ${k} was due at ${dues[k]}, not ${start + k * period}`);
  }
  assert.equal(early, 0, "no run before its due time");
  assert.ok(late < 50, `lateness up to ${late} ms (the jitter and the slow runs)`);
  assert.equal(s.runs, 100_000);
  assert.equal(s.lastRun.getTime(), start + 99_999 * period);
  assert.equal(s.nextRun().getTime(), start + 100_000 * period);
  assert.deepEqual(host.problems, []);
  assert.ok(scheduler.stats.timersArmed <= 1);
});

test("every: the default start is one period from now; a start in the past sets the phase", (t) => {
  const { scheduler } = setup(t);
  assert.equal(
    scheduler
      .every(60_000, () => {})
      .nextRun()
      .getTime(),
    T0 + 60_000,
  );
  // Occurrences at T0 − 7 s + k·10 s: the first one from now on is T0 + 3 s.
  assert.equal(
    scheduler
      .every(10_000, () => {}, { start: new Date(T0 - 7000) })
      .nextRun()
      .getTime(),
    T0 + 3000,
  );
  assert.equal(
    scheduler
      .every(10_000, () => {}, { start: T0 - 10_000 })
      .nextRun()
      .getTime(),
    T0,
  ); // due now
  assert.equal(scheduler.size, 3);
});

for (const [mode, expectRuns] of [
  // every 1 s from T0 + 1 s; asleep from T0 + 2.5 s to T0 + 12.3 s: occurrences 3..12 are
  // missed. The first wake-up after it comes half a second of the monotonic clock later
  // (the deadline it was armed for), at T0 + 12.8 s.
  ["one", [1, 2, 12, 13, 14]], // one late run, due at the latest missed occurrence, then on schedule
  ["all", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]],
  ["none", [1, 2, 13, 14]],
]) {
  test(`a process that sleeps (the monotonic clock pauses): catchUp "${mode}"`, (t) => {
    const { scheduler, runUntil, sleep } = setup(t);
    const ran = [];
    scheduler.every(SECOND, (due) => ran.push([(due.getTime() - T0) / SECOND, Date.now()]), { catchUp: mode });
    runUntil(T0 + 2500);
    sleep(9800);
    runUntil(T0 + 14_500);
    assert.deepEqual(
      ran.map((r) => r[0]),
      expectRuns,
    );
    for (const [k, at] of ran) assert.ok(at >= T0 + k * SECOND, `occurrence ${k} ran ${T0 + k * SECOND - at} ms early`);
    // Awake again, the first run comes within a second.
    const first = ran.find((r) => r[0] > 2);
    assert.ok(
      first[1] - (T0 + 12_300) <= SECOND + 5,
      `the first run after waking came ${first[1] - (T0 + 12_300)} ms after it`,
    );
  });
}

test("a long sleep with the watch first: the catch-up runs within a second of waking", (t) => {
  const { scheduler, runUntil, sleep } = setup(t);
  const ran = [];
  scheduler.cron("0 * * * *", (due) => ran.push([new Date(due).toISOString(), Date.now()]));
  runUntil(T0 + 10 * 60_000);
  sleep(5 * HOUR); // wakes at 05:10Z; the 01:00Z deadline was 50 minutes of the monotonic clock away
  runUntil(T0 + 5 * HOUR + 10 * 60_000 + 2 * SECOND);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["2026-06-01T05:00:00.000Z"],
  );
  const seen = ran[0][1] - (T0 + 5 * HOUR + 10 * 60_000);
  assert.ok(seen >= 0 && seen <= SECOND + 5, `seen ${seen} ms after waking`);
});

test('a process that was stopped (timers fire late, both clocks ran on): catchUp "one" runs once, then on schedule', (t) => {
  const { host, scheduler, runUntil } = setup(t);
  const ran = [];
  const s = scheduler.every(10 * SECOND, (due) => ran.push((due.getTime() - T0) / SECOND));
  runUntil(T0 + 15 * SECOND);
  host.now += 100 * SECOND; // SIGSTOP: nothing fired meanwhile
  runUntil(T0 + 135 * SECOND);
  assert.deepEqual(ran, [10, 110, 120, 130]);
  assert.equal(s.runs, 4);
});

test("a wall clock that steps forward: the change is seen within a second and the missed hour runs once", (t) => {
  const { host, scheduler, runUntil } = setup(t);
  const ran = [];
  scheduler.cron("0 * * * *", (due) => ran.push([new Date(due).toISOString(), Date.now() - due.getTime()]));
  runUntil(T0 + 30 * 60_000);
  host.wallShift += 2 * HOUR; // NTP or a person moved the clock: now 02:30Z
  runUntil(T0 + 2 * HOUR + 30 * 60_000 + 2 * SECOND);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["2026-06-01T02:00:00.000Z"],
  );
  assert.ok(ran[0][1] <= 30 * 60_000 + SECOND + 5, `ran ${ran[0][1]} ms after its due time`);
  runUntil(T0 + 3 * HOUR + SECOND);
  assert.equal(ran.at(-1)[0], "2026-06-01T03:00:00.000Z");
  assert.ok(ran.at(-1)[1] >= 0 && ran.at(-1)[1] <= SECOND + 5, "then on time");
});

test("a wall clock that steps back: nothing runs early; the occurrence waits for the wall clock", (t) => {
  const { host, scheduler, runUntil } = setup(t);
  const ran = [];
  scheduler.cron("0 * * * *", (due) => ran.push([new Date(due).toISOString(), Date.now() - due.getTime()]));
  runUntil(T0 + 50 * 60_000);
  host.wallShift -= 30 * 60_000; // the wall clock reads 00:20Z again
  const mono = host.now;
  runUntil(T0 + HOUR + SECOND);
  assert.deepEqual(
    ran.map((r) => r[0]),
    ["2026-06-01T01:00:00.000Z"],
  );
  assert.ok(ran[0][1] >= 0, `ran ${-ran[0][1]} ms early`);
  assert.ok(
    host.now - mono >= 40 * 60_000,
    "it waited the wall clock's 40 minutes, not the 10 the monotonic clock had left",
  );
});

test("a wall clock that steps back between the clocks' watch and a deadline: the wake-up finds it not due and re-arms", (t) => {
  const { host, scheduler } = setup(t);
  const ran = [];
  // Due at T0 + 10.5 s: its deadline falls half-way between two ticks of the watch (each second).
  scheduler.every(10 * SECOND, (due) => ran.push([due.getTime(), Date.now()]), { start: T0 + 10_500 });
  const fireNext = () => {
    const [timer] = [...host.live.values()].sort((a, b) => a.due - b.due);
    host.now = Math.max(host.now, timer.due);
    host.fire(timer);
  };
  while (Date.now() < T0 + 10_000) fireNext(); // the watch's ticks, up to the one at T0 + 10 s
  host.wallShift -= 5 * SECOND; // then the wall clock steps back, before the deadline
  fireNext(); // the deadline: by the wall clock the occurrence is 5 s away
  assert.deepEqual(ran, []);
  for (let i = 0; i < 20 && ran.length === 0; i++) fireNext();
  assert.equal(ran.length, 1);
  assert.ok(ran[0][1] >= ran[0][0], `ran ${ran[0][0] - ran[0][1]} ms before its due time by the wall clock`);
});

test("overlap false: an occurrence due while the previous run's promise is pending is skipped and counted", async (t) => {
  const { scheduler, runUntil } = setup(t);
  const ran = [];
  let finish;
  const s = scheduler.every(SECOND, (due) => {
    ran.push((due.getTime() - T0) / SECOND);
    if (ran.length === 1) return new Promise((r) => (finish = r));
    return undefined;
  });
  runUntil(T0 + 3500); // 1 runs and hangs; 2 and 3 are skipped
  assert.deepEqual(ran, [1]);
  assert.equal(s.skipped, 2);
  finish();
  await new Promise((r) => setImmediate(r));
  runUntil(T0 + 5500);
  assert.deepEqual(ran, [1, 4, 5]);
  assert.equal(s.runs, 3);
  assert.equal(s.skipped, 2);
});

test('overlap false with catchUp "all": a missed occurrence waits for the running run to end, then runs; none is skipped', async (t) => {
  const { scheduler, runUntil, sleep } = setup(t);
  const ran = [];
  const finish = [];
  const s = scheduler.every(
    SECOND,
    (due) => {
      ran.push((due.getTime() - T0) / SECOND);
      return new Promise((r) => finish.push(r));
    },
    { catchUp: "all" },
  );
  runUntil(T0 + 1500); // 1 runs and hangs
  finish.shift()();
  await new Promise((r) => setImmediate(r));
  sleep(3200); // 2 to 5 are missed; the first wake-up after it comes at T0 + 5.2 s
  runUntil(T0 + 5300); // 2 runs (a catch-up) and hangs: 3, 4 and 5 were due before it began
  assert.deepEqual(ran, [1, 2]);
  assert.equal(s.skipped, 0);
  for (const k of [3, 4, 5]) {
    finish.shift()();
    await new Promise((r) => setImmediate(r));
    runUntil(T0 + 5300 + 10 * k);
    assert.equal(ran.at(-1), k, `occurrence ${k} runs once the run before it ended`);
  }
  runUntil(T0 + 6500); // 6 comes due while 5 runs: an overrun, skipped
  finish.shift()();
  await new Promise((r) => setImmediate(r));
  runUntil(T0 + 7500);
  assert.deepEqual(ran, [1, 2, 3, 4, 5, 7]);
  assert.equal(s.skipped, 1);
});

test("overlap true: occurrences run while the previous run's promise is pending; a rejection goes to onerror", async (t) => {
  const { scheduler, runUntil, errors } = setup(t);
  const ran = [];
  const s = scheduler.every(
    SECOND,
    (due) => {
      ran.push((due.getTime() - T0) / SECOND);
      return ran.length === 2 ? Promise.reject(new Error("run 2 failed")) : new Promise(() => {});
    },
    { overlap: true },
  );
  runUntil(T0 + 3500);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, [1, 2, 3]);
  assert.equal(s.skipped, 0);
  assert.deepEqual(
    errors.map((e) => e.message),
    ["run 2 failed"],
  );
});

test("a callback that throws goes to onerror and the schedule goes on", (t) => {
  const { scheduler, runUntil, errors } = setup(t);
  const s = scheduler.every(SECOND, () => {
    throw new Error("boom");
  });
  runUntil(T0 + 3500);
  assert.equal(s.runs, 3);
  assert.equal(errors.length, 3);
  assert.equal(s.state, "active");
});

test("cancel, pause and resume; nextRun follows; close ends every schedule", (t) => {
  const { scheduler, runUntil } = setup(t);
  const ran = [];
  const a = scheduler.every(10 * SECOND, (due) => ran.push(["a", (due.getTime() - T0) / SECOND]));
  const b = scheduler.cron("*/15 * * * * *", (due) => ran.push(["b", (due.getTime() - T0) / SECOND]));
  assert.equal(typeof a.id, "string");
  assert.notEqual(a.id, b.id);
  assert.equal(String(a), "[object Schedule]");
  assert.equal(b.nextRun().getTime(), T0 + 15 * SECOND);
  runUntil(T0 + 16 * SECOND);
  assert.equal(a.pause(), true);
  assert.equal(a.pause(), false);
  assert.equal(a.state, "paused");
  assert.equal(a.nextRun(), undefined);
  assert.equal(scheduler.size, 1);
  runUntil(T0 + 41 * SECOND); // a would have run at 20, 30, 40
  assert.equal(a.resume(), true);
  assert.equal(a.resume(), false);
  assert.equal(a.nextRun().getTime(), T0 + 20 * SECOND, "the occurrence pending when it was paused");
  runUntil(T0 + 42 * SECOND);
  assert.equal(a.nextRun().getTime(), T0 + 50 * SECOND, 'it fell behind: catchUp "one" ran 40 once, the phase kept');
  runUntil(T0 + 51 * SECOND);
  assert.equal(b.cancel(), true);
  assert.equal(b.cancel(), false);
  assert.equal(b.state, "cancelled");
  assert.equal(b.nextRun(), undefined);
  runUntil(T0 + 70 * SECOND);
  assert.deepEqual(ran, [
    ["a", 10],
    ["b", 15],
    ["b", 30],
    ["a", 40],
    ["b", 45],
    ["a", 50],
    ["a", 60],
    ["a", 70],
  ]);
  // A paused schedule can be cancelled; closing the scheduler ends the rest.
  const c = scheduler.every(SECOND, () => {});
  c.pause();
  assert.equal(c.cancel(), true);
  scheduler.close();
  assert.equal(a.state, "ended");
  assert.equal(a.nextRun(), undefined);
  assert.equal(a.resume(), false);
  assert.equal(a.cancel(), false);
  assert.throws(() => scheduler.every(SECOND, () => {}), { name: "ClosedError" });
});

test("a schedule cancelled from its own callback does not run again; a rule with no occurrence is refused", (t) => {
  const { scheduler, runUntil } = setup(t);
  let n = 0;
  const s = scheduler.every(SECOND, () => {
    if (++n === 3) s.cancel();
  });
  runUntil(T0 + 10 * SECOND);
  assert.equal(n, 3);
  assert.equal(scheduler.size, 0);
  assert.throws(() => scheduler.cron("0 0 30 2 *", () => {}), {
    name: "RangeError",
    message: /^expression "0 0 30 2 \*" has no occurrence/,
  });
  assert.throws(() => cron("0 0 31 4,6,9,11 *"), { name: "RangeError", message: /^expression "0 0 31 4,6,9,11 \*"/ });
  assert.equal(scheduler.size, 0);
});

test("many schedules and one-off callbacks share one host timer", (t) => {
  const { host, scheduler, runUntil } = setup(t);
  let runs = 0;
  for (let i = 0; i < 200; i++) scheduler.every(100 + i * 7, () => runs++);
  for (let i = 0; i < 50; i++) scheduler.cron(`${i % 60} * * * * *`, () => runs++, { timezone: "Europe/Berlin" });
  for (let i = 0; i < 100; i++) scheduler.schedule(() => runs++, i * 37);
  assert.equal(scheduler.size, 350);
  assert.equal(host.live.size, 1);
  runUntil(T0 + 120 * SECOND); // runUntil asserts at most one live timer before each wake-up
  assert.ok(runs > 40_000, `${runs} runs`);
  assert.equal(scheduler.stats.timersArmed, 1);
  assert.deepEqual(host.problems, []);
});

test("bad arguments throw, naming the argument, and change nothing", (t) => {
  const { host, scheduler } = setup(t);
  const fn = () => {};
  const cases = [
    [() => scheduler.every(0, fn), RangeError, /periodMs/],
    [() => scheduler.every(1.5, fn), RangeError, /periodMs.*whole/],
    [() => scheduler.every(-5, fn), RangeError, /periodMs/],
    [() => scheduler.every(Infinity, fn), RangeError, /periodMs/],
    [() => scheduler.every("1000", fn), TypeError, /periodMs/],
    [() => scheduler.every(1000, "fn"), TypeError, /callback/],
    [() => scheduler.every(1000, fn, null), TypeError, /options/],
    [() => scheduler.every(1000, fn, { catchUp: "some" }), RangeError, /catchUp/],
    [() => scheduler.every(1000, fn, { catchUp: 1 }), TypeError, /catchUp/],
    [() => scheduler.every(1000, fn, { overlap: "yes" }), TypeError, /overlap/],
    [() => scheduler.every(1000, fn, { start: "tomorrow" }), TypeError, /start/],
    [() => scheduler.every(1000, fn, { start: new Date(NaN) }), RangeError, /start/],
    [
      () => scheduler.every(1000, fn, { catchup: "all" }),
      TypeError,
      /options\.catchup is not an option of every\(\); did you mean catchUp\?/,
    ],
    [
      () => scheduler.every(1000, fn, { timezone: "UTC" }),
      TypeError,
      /options\.timezone is not an option of every\(\)/,
    ],
    // Instants outside the range every engine holds (arguments.js), named at the call.
    [() => scheduler.every(10, fn, { start: -1e17 }), RangeError, /^start must be an instant from/],
    [() => scheduler.every(10, fn, { start: 9e15 }), RangeError, /^start\b/],
    [() => scheduler.every(10, fn, { start: new Date(Date.UTC(2300, 0, 1)) }), RangeError, /^start\b/],
    [() => scheduler.every(8.64e15, fn), RangeError, /^periodMs puts the first occurrence/],
    [() => scheduler.every(2 ** 60, fn), RangeError, /^periodMs\b/],
    [() => scheduler.cron("* * * * *", fn, { start: 9e15 }), RangeError, /^start\b/],
    [
      () => scheduler.cron("0 0 2 1 *", fn, { start: Date.UTC(2188, 11, 31) }),
      RangeError,
      /^start: the schedule has no occurrence at or after 2188-12-31.* up to 2189-01-01/,
    ],
    [() => scheduler.scheduleAt(fn, 9e15), RangeError, /^deadline\b/],
    [() => scheduler.cron(42, fn), TypeError, /expression/],
    [() => scheduler.cron("* * *", fn), TypeError, /expression/],
    [() => scheduler.cron("61 * * * *", fn), RangeError, /expression/],
    [() => scheduler.cron("* * * * * * *", fn), TypeError, /expression/],
    [() => scheduler.cron("@reboot", fn), TypeError, /expression/],
    [() => scheduler.cron("* * * * *", fn, { timezone: "Mars/Olympus" }), RangeError, /timezone/],
    [() => scheduler.cron("* * * * *", fn, { timezone: 1 }), TypeError, /timezone/],
    [() => scheduler.cron("* * * * *", fn, { overlap: 0 }), TypeError, /overlap/],
    [() => scheduler.cron("* * * * *", fn, { every: 5 }), TypeError, /options\.every is not an option of cron\(\)/],
    [() => scheduler.cron("* * * * *", null), TypeError, /callback/],
    [() => new Scheduler().cron("* * * * *", fn), TypeError, /tarry-queue\/cron/],
    [() => new Scheduler({ cron: "yes" }), TypeError, /cron/],
    [() => cron("* * * * *", { tz: "UTC" }), TypeError, /options\.tz is not an option of cron\(\)/],
  ];
  for (const [call, type, message] of cases) {
    assert.throws(call, (e) => e instanceof type && message.test(e.message), String(call));
  }
  assert.equal(scheduler.size, 0);
  assert.equal(host.live.size, 0, "no timer armed");
});

test("a host that refuses the timer: every() throws its error and changes nothing", (t) => {
  const { host, scheduler } = setup(t);
  host.refusals = 1;
  assert.throws(() => scheduler.every(SECOND, () => {}), /refused a timer/);
  assert.equal(scheduler.size, 0);
  const s = scheduler.every(SECOND, () => {});
  s.pause();
  host.refusals = 1;
  assert.throws(() => s.resume(), /refused a timer/);
  assert.equal(s.state, "paused");
  assert.equal(s.resume(), true);
  assert.equal(scheduler.size, 1);
});

test("schedules' items are not one-off callbacks: cancel and reschedule by handle refuse them", (t) => {
  const { scheduler } = setup(t);
  const h = scheduler.schedule(() => {}, 10);
  const s = scheduler.every(SECOND, () => {});
  // The schedule's item got the next handle after h's; a guessed handle must not move it.
  for (let guess = h + 1; guess < h + 4; guess++) {
    assert.equal(scheduler.cancel(guess), false);
    assert.equal(scheduler.reschedule(guess, 0), false);
  }
  assert.equal(s.state, "active");
  assert.equal(scheduler.size, 2);
});

test("real timers: every() runs on time, never early by the wall clock", async () => {
  const scheduler = new Scheduler({ cron });
  const ran = [];
  const s = scheduler.every(25, (due) => ran.push(Date.now() - due.getTime()));
  const c = scheduler.cron("* * * * * *", (due) => ran.push(Date.now() - due.getTime()));
  await new Promise((r) => setTimeout(r, 1300));
  s.cancel();
  c.cancel();
  assert.ok(ran.length >= 20, `${ran.length} runs`);
  for (const late of ran) {
    assert.ok(late >= 0, `ran ${-late} ms early`);
    assert.ok(late < 2000, `ran ${late} ms late`);
  }
  assert.equal(scheduler.stats.timersArmed, 0, "nothing armed once every schedule is cancelled");
  scheduler.close();
});

test("no loop depends on an argument: every(10, fn, { start: -1e17 }) is refused at once (in a child process, so that a spin fails the test instead of hanging it)", () => {
  const code = `import { Scheduler } from "tarry-queue";
    const s = new Scheduler({ keepAlive: false });
    try { s.every(10, () => {}, { start: -1e17 }); console.log("accepted"); }
    catch (e) { console.log(e.name); }
    s.close();`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    cwd: root,
    encoding: "utf8",
    timeout: 10_000,
  });
  assert.equal(r.error, undefined, `the call did not return within 10 s: ${r.error}`);
  assert.equal(r.stdout.trim(), "RangeError", r.stderr);
});

test("EveryRule: occurrence k by one remainder, exact over the whole instant range, ending at its latest instant", () => {
  const rnd = rng(7);
  for (let i = 0; i < 20_000; i++) {
    const period = 1 + Math.floor(rnd() ** 4 * (i % 2 ? 1e6 : 1e13));
    const start = EARLIEST_INSTANT + Math.floor(rnd() * (LATEST_INSTANT - EARLIEST_INSTANT));
    const rule = new EveryRule(period, start);
    const after = start - 1e9 + Math.floor(rnd() * (LATEST_INSTANT - start + 1e9));
    const next = rule.next(after);
    if (after < start) assert.equal(next, start);
    else if (next !== undefined) {
      // On the grid, after `after`, and the one before it not after.
      assert.equal((BigInt(next) - BigInt(start)) % BigInt(period), 0n, `${period} ${start} ${after}`);
      assert.ok(next > after && next - period <= after, `${period} ${start} ${after}: ${next}`);
      assert.ok(next <= LATEST_INSTANT);
      assert.equal(rule.latest(next), next);
      assert.equal(rule.latest(next - 1), next - period >= start ? next - period : undefined);
    } else assert.ok(rule.latest(after) + period > LATEST_INSTANT, `${period} ${start} ${after}: ended early`);
  }
  const grid = new EveryRule(1, EARLIEST_INSTANT);
  assert.equal(grid.next(LATEST_INSTANT - 1), LATEST_INSTANT);
  assert.equal(grid.next(LATEST_INSTANT), undefined, "the rule ends at the latest instant");
  assert.equal(
    new EveryRule(7, EARLIEST_INSTANT).next(0),
    5,
    "-8.64e15 + 7k: 8.64e15 = 7·1234285714285714 + 2, so the grid is 5 mod 7",
  );
  assert.throws(() => new EveryRule(10, -1e17), { name: "RangeError", message: /^start\b/ });
});

test("a schedule whose next occurrence would fall after the latest instant ends, rather than keeping an impossible time", (t) => {
  const { scheduler, runUntil } = setup(t);
  // Occurrences at T0 + 1 s and then each year: the second would land after 2189.
  const s = scheduler.every(LATEST_INSTANT - T0, () => {}, { start: T0 + SECOND });
  assert.equal(s.nextRun().getTime(), T0 + SECOND);
  runUntil(T0 + 2 * SECOND);
  assert.equal(s.runs, 1);
  assert.equal(s.state, "ended");
  assert.equal(s.nextRun(), undefined);
});
