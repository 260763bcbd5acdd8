// DurableDelayQueue's schedules on the fake storage and a clock the test moves: a cron chain
// driven by the alarm across daylight-saving changes (the object reopened from storage before
// every alarm, as after an eviction), and an object reset while an occurrence's handler ran.
// The contract's cases (tests/contract) run the rest on real time, here and in workerd; the
// failure sweep (durable-sweep.test.mjs) fails each storage call of the schedule operations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DurableDelayQueue, FakeStorage, manualClock } from "./durable-helpers.mjs";

const iso = (t) => new Date(t).toISOString();

/** Runs the object's alarm `n` times, each in a fresh instance read from storage; the occurrences it hands out. */
async function alarms(clock, storage, n) {
  const got = [];
  for (let i = 0; i < n; i++) {
    const queue = await DurableDelayQueue.open(storage); // evicted since the last alarm
    clock.now = storage.alarm;
    await storage.fire(() =>
      queue.deliver((_value, job) => {
        assert.ok(job.deadline <= Date.now(), "early");
        got.push([job.schedule, iso(job.deadline), job.attempt]);
      }),
    );
  }
  return got;
}

test("cron across daylight-saving changes, driven by the alarm, the object evicted before every alarm: the zone's instants, each once", async (t) => {
  const clock = manualClock(t, Date.parse("2026-03-06T00:00:00Z"));
  const storage = new FakeStorage();
  const queue = await DurableDelayQueue.open(storage);
  await queue.schedule("ny", { cron: "30 2 * * *", timezone: "America/New_York" }, "ny");
  assert.deepEqual(await alarms(clock, storage, 4), [
    ["ny", "2026-03-06T07:30:00.000Z", 1], // 02:30 EST
    ["ny", "2026-03-07T07:30:00.000Z", 1],
    ["ny", "2026-03-08T07:00:00.000Z", 1], // 02:30 does not exist: 03:00 EDT
    ["ny", "2026-03-09T06:30:00.000Z", 1], // 02:30 EDT
  ]);
  // Lord Howe moves its clocks by 30 minutes (02:00 → 02:30 on 4 October 2026): 02:15 does
  // not exist, and the job for it runs at the first instant after the gap.
  clock.now = Date.parse("2026-10-02T12:00:00Z");
  const again = await DurableDelayQueue.open(storage);
  assert.equal(await again.unschedule("ny"), true);
  await again.schedule("lh", { cron: "15 2 * * *", timezone: "Australia/Lord_Howe" }, "lh");
  assert.deepEqual(await alarms(clock, storage, 3), [
    ["lh", "2026-10-02T15:45:00.000Z", 1], // 02:15 +10:30
    ["lh", "2026-10-03T15:30:00.000Z", 1], // 02:30 +11:00, the first instant after the gap
    ["lh", "2026-10-04T15:15:00.000Z", 1], // 02:15 +11:00
  ]);
});

test("an object reset while an occurrence's handler runs: the occurrence comes again (attempt 2, its due time) and the next one was already pending", async (t) => {
  const clock = manualClock(t);
  const storage = new FakeStorage();
  const queue = await DurableDelayQueue.open(storage);
  const { nextRun: t0 } = await queue.schedule("s", { every: 1000 }, "s");
  clock.now = t0;
  let running = false;
  storage.fire(() => queue.deliver(() => ((running = true), new Promise(() => {})))); // never finishes
  while (!running) await new Promise((r) => setImmediate(r)); // its attempt is stored by then
  // The object is reset: what storage holds is all that is left.
  const after = await DurableDelayQueue.open(storage.clone());
  assert.deepEqual(
    after.toArray().map((i) => [i.id, i.attempt]),
    [
      [`s@${t0}`, 1],
      [`s@${t0 + 1000}`, 0],
    ],
  );
  clock.now = t0 + 1000;
  const got = [];
  await after.deliver((_v, job) => got.push([job.id, job.deadline - t0, job.attempt]));
  assert.deepEqual(got, [
    [`s@${t0}`, 0, 2],
    [`s@${t0 + 1000}`, 1000, 1],
  ]);
  assert.equal((await after.schedules())[0].nextRun, t0 + 2000);
});

test("a paused schedule stays paused across an eviction (open() places nothing for it); resumed, catchUp decides; maxRuns ends it", async (t) => {
  const clock = manualClock(t);
  const storage = new FakeStorage();
  const queue = await DurableDelayQueue.open(storage);
  const { nextRun: t0 } = await queue.schedule("s", { every: 1000 }, "s", { maxRuns: 2 });
  assert.equal(await queue.pauseSchedule("s"), true);
  clock.now = t0 + 3500; // three occurrences due while paused
  const again = await DurableDelayQueue.open(storage.clone()); // evicted meanwhile
  assert.equal(await again.size(), 0, "open() does not heal a paused schedule's occurrence");
  const [s] = await again.schedules();
  assert.deepEqual([s.paused, s.nextRun, s.maxRuns], [true, t0, 2]);
  assert.equal(await again.resumeSchedule("s"), true);
  const got = [];
  await again.deliver((_v, job) => got.push(job.deadline - t0));
  assert.deepEqual(got, [3000], 'catchUp "one": the latest missed occurrence, once');
  assert.deepEqual(await again.nextRuns("s", 5), [t0 + 4000], "one run left of maxRuns");
  clock.now = t0 + 4000;
  await again.deliver((_v, job) => got.push(job.deadline - t0));
  assert.deepEqual(got, [3000, 4000]);
  const [ended] = await again.schedules();
  assert.deepEqual([ended.runs, ended.nextRun, ended.paused], [2, undefined, false], "ended, still listed");
  assert.equal(await again.size(), 0);
});
