// The schedule controls of the in-memory Scheduler: a name (`id`), maxRuns, stopAt, a run
// now (trigger) and a preview of the next runs (nextRuns), on a fake clock and a fake Date
// (tests/fuzz/host.mjs). tests/contract/schedule-cases.mjs checks the same controls on the
// durable engines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scheduler } from "tarry-queue";
import { cron } from "tarry-queue/cron";
import { FakeHost } from "../fuzz/host.mjs";

const T0 = Date.UTC(2026, 5, 1); // a Monday, 00:00Z
const SECOND = 1000;

function setup(t) {
  const host = new FakeHost({ start: 1000, wallBase: T0 - 1000 });
  host.install();
  t.after(() => host.uninstall());
  const errors = [];
  const scheduler = new Scheduler({ clock: host.clock, cron, onerror: (e) => errors.push(e) });
  t.after(() => scheduler.close());
  /** Fires the timer when due, moving the clock to it, until the wall clock reaches `wall`. */
  const runUntil = (wall) => {
    for (let guard = 0; guard < 1e6; guard++) {
      const [timer] = [...host.live.values()].sort((a, b) => a.due - b.due);
      if (timer === undefined || Date.now() + (timer.due - host.now) > wall) {
        host.now += Math.max(0, wall - Date.now());
        return;
      }
      host.now = Math.max(host.now, timer.due);
      host.fire(timer);
    }
    throw new Error("runUntil: too many wake-ups");
  };
  return { host, scheduler, errors, runUntil };
}

const secondsOf = (dates) => dates.map((d) => (d.getTime() - T0) / SECOND);

test("id names a schedule: trigger and nextRuns find it by id; a second live schedule of that id is refused", (t) => {
  const { scheduler } = setup(t);
  const s = scheduler.every(SECOND, () => {}, { id: "report" });
  assert.equal(s.id, "report");
  assert.deepEqual(secondsOf(scheduler.nextRuns("report", 3)), [1, 2, 3]);
  assert.throws(
    () => scheduler.every(SECOND, () => {}, { id: "report" }),
    (e) => e instanceof RangeError && /^options\.id "report" names a schedule/.test(e.message),
  );
  assert.equal(scheduler.size, 1, "the refused schedule changed nothing");
  s.cancel();
  assert.equal(scheduler.every(SECOND, () => {}, { id: "report" }).id, "report", "a cancelled one frees its id");
  assert.match(scheduler.every(SECOND, () => {}).id, /^schedule-\d+$/, "the default name, as before");
});

test("maxRuns: the schedule ends after its last run, with no occurrence pending", (t) => {
  const { scheduler, runUntil } = setup(t);
  const ran = [];
  const s = scheduler.every(SECOND, (due) => ran.push(due), { maxRuns: 3 });
  assert.deepEqual(secondsOf(s.nextRuns(10)), [1, 2, 3], "the preview stops at maxRuns");
  runUntil(T0 + 10 * SECOND);
  assert.deepEqual(secondsOf(ran), [1, 2, 3]);
  assert.equal(s.state, "ended");
  assert.equal(s.runs, 3);
  assert.equal(s.nextRun(), undefined);
  assert.deepEqual(s.nextRuns(5), []);
  assert.equal(scheduler.size, 0, "no occurrence pending");
});

test("stopAt: no occurrence after it; the schedule ends at the last one at or before it", (t) => {
  const { scheduler, runUntil } = setup(t);
  const ran = [];
  const s = scheduler.every(SECOND, (due) => ran.push(due), { stopAt: new Date(T0 + 3500) });
  assert.deepEqual(secondsOf(s.nextRuns(10)), [1, 2, 3]);
  runUntil(T0 + 3 * SECOND);
  assert.equal(s.state, "ended", "ended at its last occurrence: the next would be after stopAt");
  runUntil(T0 + 10 * SECOND);
  assert.deepEqual(secondsOf(ran), [1, 2, 3]);
  assert.equal(scheduler.size, 0);
  // A cron schedule likewise; a stopAt before the first occurrence is refused.
  const c = scheduler.cron("*/2 * * * * *", () => {}, { stopAt: T0 + 16 * SECOND });
  assert.deepEqual(secondsOf(c.nextRuns(10)), [12, 14, 16]);
  assert.throws(
    () => scheduler.every(SECOND, () => {}, { start: T0 + 60 * SECOND, stopAt: T0 + 30 * SECOND }),
    (e) => e instanceof RangeError && /^options\.stopAt .* is before the schedule's first occurrence/.test(e.message),
  );
});

test("trigger: one extra run now that counts (runs, lastRun, maxRuns); the pending occurrence stays", (t) => {
  const { scheduler, runUntil } = setup(t);
  const ran = [];
  const s = scheduler.every(10 * SECOND, (due) => ran.push(due.getTime() - T0), { id: "r", maxRuns: 2 });
  runUntil(T0 + 2 * SECOND);
  assert.equal(scheduler.trigger("r"), true);
  assert.deepEqual(ran, [2 * SECOND], "ran now, its due time now");
  assert.equal(s.runs, 1);
  assert.equal(s.lastRun?.getTime(), T0 + 2 * SECOND);
  assert.equal(s.nextRun()?.getTime(), T0 + 10 * SECOND, "the occurrence stays where it was");
  runUntil(T0 + 60 * SECOND);
  assert.deepEqual(ran, [2 * SECOND, 10 * SECOND], "the trigger counted towards maxRuns");
  assert.equal(s.state, "ended");
  assert.equal(scheduler.trigger("r"), false, "an ended schedule does not run");
  assert.equal(scheduler.trigger("nobody"), false);
  assert.equal(s.trigger(), false);
});

test("trigger with overlap false: while a run lasts nothing runs (false, nothing counted); a paused schedule runs and stays paused", async (t) => {
  const { scheduler, runUntil } = setup(t);
  let finish;
  let calls = 0;
  const s = scheduler.every(10 * SECOND, () => {
    calls++;
    return new Promise((r) => (finish = r));
  });
  assert.equal(s.trigger(), true);
  assert.equal(s.trigger(), false, "the first run's promise is pending");
  assert.deepEqual([calls, s.runs, s.skipped], [1, 1, 0]);
  finish();
  await new Promise((r) => setImmediate(r));
  s.pause();
  assert.equal(scheduler.trigger(s), true);
  assert.equal(s.state, "paused");
  assert.equal(s.nextRun(), undefined);
  finish();
  await new Promise((r) => setImmediate(r));
  runUntil(T0 + 15 * SECOND);
  assert.equal(calls, 2, "paused: no occurrence ran");
});

test("nextRuns: the pending occurrence first; a paused schedule's from now; bounded n, checked", (t) => {
  const { scheduler, runUntil } = setup(t);
  const s = scheduler.every(SECOND, () => {}, { start: T0 + 500 });
  assert.deepEqual(secondsOf(s.nextRuns(3)), [0.5, 1.5, 2.5]);
  runUntil(T0 + 1000);
  assert.deepEqual(secondsOf(scheduler.nextRuns(s, 2)), [1.5, 2.5]);
  s.pause();
  runUntil(T0 + 4000);
  assert.deepEqual(secondsOf(s.nextRuns(2)), [1.5, 2.5], "the occurrence resume() places first (catchUp decides then)");
  for (const [n, type] of [
    [0, RangeError],
    [101, RangeError],
    [1.5, RangeError],
    ["3", TypeError],
  ]) {
    assert.throws(
      () => scheduler.nextRuns(s, n),
      (e) => e instanceof type && /^n must be/.test(e.message),
      String(n),
    );
  }
  assert.equal(scheduler.nextRuns(s, 100).length, 100);
  assert.throws(
    () => scheduler.nextRuns(42, 1),
    (e) => e instanceof TypeError && /^schedule must be/.test(e.message),
  );
});

test("bad maxRuns, stopAt and id throw, naming the option, and change nothing", (t) => {
  const { host, scheduler } = setup(t);
  const fn = () => {};
  const cases = [
    [{ maxRuns: 0 }, RangeError, /^options\.maxRuns must be a whole number from 1/],
    [{ maxRuns: 1.5 }, RangeError, /^options\.maxRuns/],
    [{ maxRuns: "3" }, TypeError, /^options\.maxRuns/],
    [{ stopAt: "tomorrow" }, TypeError, /^options\.stopAt/],
    [{ stopAt: 9e15 }, RangeError, /^options\.stopAt must be an instant from/],
    [{ stopAt: new Date(NaN) }, RangeError, /^options\.stopAt/],
    [{ id: "" }, RangeError, /^options\.id must not be empty/],
    [{ id: 7 }, TypeError, /^options\.id must be a string/],
    [{ maxruns: 3 }, TypeError, /options\.maxruns is not an option of every\(\); did you mean maxRuns\?/],
  ];
  for (const [opts, type, message] of cases) {
    assert.throws(
      () => scheduler.every(SECOND, fn, opts),
      (e) => e instanceof type && message.test(e.message),
      JSON.stringify(opts),
    );
    assert.throws(
      () => scheduler.cron("* * * * *", fn, opts),
      (e) => e instanceof type && (message.test(e.message) || /of cron\(\)/.test(e.message)),
      JSON.stringify(opts),
    );
  }
  assert.equal(scheduler.size, 0);
  assert.equal(host.live.size, 0, "no timer armed");
});
