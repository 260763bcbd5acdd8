// The engine contract's schedules (docs/schedules.md): schedule(), unschedule(), schedules(),
// and occurrences delivered through the engine's own consumer (process() on Redis, deliver()
// from the alarm on Durable Objects), with job.schedule and job.deadline. cases.mjs adds these
// to its cases, so every runner runs them against its engine; like the others, nothing here
// but node:assert, so they run in workerd too.
//
// Time is real: periods are tens to hundreds of ms, and what a case asserts about catch-ups
// rests on a first run that takes several periods (the engine's one consumer busy meanwhile),
// with bounds wide enough for a loaded machine.
import assert from "node:assert/strict";

/**
 * @param {(name: string, run: (e: any) => Promise<void>) => void} test
 * @param {{ consume: Function, checkBadCalls: Function, HOUR: number, sleep: (ms: number) => Promise<void> }} helpers
 */
export function scheduleCases(test, { consume, checkBadCalls, HOUR, sleep }) {
  /** Deliveries as [schedule, due offset from `t0`, attempt]. */
  const shape = (got, t0) => got.map((d) => [d.schedule, d.deadline - t0, d.attempt]);

  test("schedule({ every }): occurrences are items, job.schedule its id and job.deadline its due time, at a fixed rate; schedules() tells the runs", async (e) => {
    const q = await e.open();
    const info = await q.schedule("beat", { every: 80 }, { kind: "beat" }, { catchUp: "all" });
    assert.deepEqual(
      { ...info, start: typeof info.start, nextRun: typeof info.nextRun },
      {
        id: "beat",
        every: 80,
        start: "number",
        catchUp: "all",
        overlap: false,
        value: { kind: "beat" },
        nextRun: "number",
        lastRun: undefined,
        runs: 0,
        skipped: 0,
        maxRuns: undefined,
        stopAt: undefined,
        paused: false,
      },
    );
    assert.equal(info.start, info.nextRun, "the first occurrence is the start: one period from the call");
    assert.ok(
      info.nextRun - Date.now() <= 80 + 1000 && info.nextRun - Date.now() > -1000,
      `due in ${info.nextRun - Date.now()} ms`,
    );
    assert.equal(await q.size(), 1, "a schedule has one pending occurrence");
    const got = await consume(e, q, 4);
    assert.deepEqual(shape(got, info.nextRun), [
      ["beat", 0, 1],
      ["beat", 80, 1],
      ["beat", 160, 1],
      ["beat", 240, 1],
    ]);
    for (const d of got) {
      assert.equal(d.id, `beat@${d.deadline}`);
      assert.deepEqual(d.value, { kind: "beat" });
    }
    const [s] = await q.schedules();
    assert.equal(s.id, "beat");
    assert.ok(s.runs >= 4 && s.lastRun >= got[3].deadline, `runs ${s.runs}, lastRun ${s.lastRun}`);
    assert.equal(s.nextRun, s.lastRun + 80);
    assert.equal(await q.unschedule("beat"), true);
    assert.equal(await q.unschedule("beat"), false);
    assert.deepEqual(await q.schedules(), []);
    assert.equal(await q.size(), 0, "its pending occurrence went with it");
  });

  test("schedule({ cron, timezone }): occurrences at the expression's instants in the zone, on the second, never early", async (e) => {
    const q = await e.open();
    const info = await q.schedule("tick", { cron: "* * * * * *", timezone: "Asia/Kathmandu" }, "tick", {
      catchUp: "all",
    });
    assert.equal(info.cron, "* * * * * *");
    assert.equal(info.timezone, "Asia/Kathmandu");
    assert.equal(info.nextRun % 1000, 0);
    assert.ok(
      info.nextRun > Date.now() - 1000 && info.nextRun <= Date.now() + 2000,
      `due in ${info.nextRun - Date.now()} ms`,
    );
    const got = await consume(e, q, 2);
    assert.deepEqual(shape(got, info.nextRun), [
      ["tick", 0, 1],
      ["tick", 1000, 1],
    ]);
    const [hourly] = [await q.schedule("hourly", { cron: "0 * * * *", timezone: "Asia/Kathmandu" }, null)];
    // Kathmandu is UTC+05:45: its whole hours are at 15 minutes past UTC's.
    assert.equal(new Date(hourly.nextRun).getUTCMinutes(), 15);
    assert.deepEqual(
      (await q.schedules()).map((s) => s.id),
      ["hourly", "tick"],
    );
  });

  test("schedule() again: the same rule keeps the chain (new value and options from the next occurrence on); a new rule replaces the pending occurrence", async (e) => {
    const q = await e.open();
    const t = Date.now();
    const a = await q.schedule("s", { every: HOUR }, "v1");
    const b = await q.schedule("s", { every: HOUR }, "v2", { catchUp: "none" });
    assert.equal(b.nextRun, a.nextRun, "the chain goes on");
    assert.deepEqual([b.value, b.catchUp, b.start], ["v2", "none", a.start]);
    assert.equal(await q.size(), 1);
    const phased = await q.schedule("p", { every: HOUR }, "p", { start: t - HOUR / 2 });
    assert.equal(phased.nextRun, Math.ceil(t - HOUR / 2) + HOUR, "a start in the past sets the phase");
    const later = await q.schedule("p", { every: HOUR }, "p", { start: new Date(t + 2 * HOUR) });
    assert.equal(later.nextRun, Math.ceil(t + 2 * HOUR), "another start: a new rule");
    // catchUp "all": its first occurrence runs however late the calls below leave the consumer.
    const c = await q.schedule("s", { every: 50 }, "v3", { catchUp: "all" });
    assert.equal(c.every, 50);
    assert.notEqual(c.nextRun, a.nextRun);
    assert.equal(await q.size(), 2, "one pending occurrence per schedule");
    assert.equal(await q.delayOf(`s@${a.nextRun}`), undefined, "the old rule's occurrence is gone");
    const [got] = await consume(e, q, 1);
    assert.deepEqual([got.schedule, got.value, got.deadline], ["s", "v3", c.nextRun]);
  });

  test("a schedule's pending occurrence belongs to it: cancel and reschedule by its id say false and leave it", async (e) => {
    const q = await e.open();
    const { nextRun } = await q.schedule("s", { every: HOUR }, "x");
    const id = `s@${nextRun}`;
    assert.equal(await q.cancel(id), false);
    assert.equal(await q.reschedule(id, 10), false);
    assert.ok((await q.delayOf(id)) > HOUR - 60_000);
    assert.equal(await q.size(), 1);
    assert.equal((await q.schedules())[0].nextRun, nextRun);
    // An item offered under its id replaces it; schedule() again gives the schedule its next.
    await q.offer("not an occurrence", 2 * HOUR, { id });
    const again = await q.schedule("s", { every: HOUR }, "x");
    assert.equal(again.nextRun, nextRun + HOUR, "the schedule goes on after the occurrence replaced");
    assert.ok((await q.delayOf(`s@${again.nextRun}`)) > HOUR, "its pending occurrence is there again");
    assert.equal(await q.size(), 2);
  });

  test("get(), pending() and inFlight() show an occurrence's schedule; a plain item has no schedule key, even under an occurrence's id", async (e) => {
    const q = await e.open();
    // Due in 200 ms, the next an hour later: one occurrence in flight at a time.
    const { nextRun } = await q.schedule("s", { every: HOUR }, "tick", { start: Date.now() + 200 });
    const id = `s@${nextRun}`;
    await q.offer("plain", HOUR, { id: "plain" });
    await q.offer("lookalike", 2 * HOUR, { id: "t@5" });
    const fields = (x) => [x.id, x.state, Object.hasOwn(x, "schedule") ? x.schedule : "no key"];
    assert.deepEqual((await q.pending()).items.map(fields), [
      [id, "pending", "s"],
      ["plain", "pending", "no key"],
      ["t@5", "pending", "no key"],
    ]);
    assert.deepEqual(fields(await q.get(id)), [id, "pending", "s"]);
    assert.deepEqual(fields(await q.get("plain")), ["plain", "pending", "no key"]);
    assert.deepEqual(fields(await q.get("t@5")), ["t@5", "pending", "no key"]);
    let during;
    await consume(e, q, 1, async (_v, job) => {
      during = { inFlight: (await q.inFlight()).items.map(fields), get: fields(await q.get(job.id)) };
    });
    assert.deepEqual(during, { inFlight: [[id, "inFlight", "s"]], get: [id, "inFlight", "s"] });
  });

  // A first run that takes 450 ms, every 100 ms, one consumer: when it ends, the schedule is
  // several occurrences behind, and catchUp decides what comes next.
  const slowFirst = (d) => (d === 0 ? sleep(450) : undefined);
  const grid = (got, t0) => got.every((d) => (d.deadline - t0) % 100 === 0);

  test('catchUp "all": after a run that took several periods, every missed occurrence, in order, each with its own due time', async (e) => {
    const q = await e.open();
    const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { catchUp: "all" });
    let n = 0;
    const got = await consume(e, q, 6, () => slowFirst(n++));
    assert.deepEqual(
      got.map((d) => d.deadline - t0),
      [0, 100, 200, 300, 400, 500],
    );
  });

  test('catchUp "one" (the default): after a run that took several periods, one run for the latest missed occurrence, then on schedule', async (e) => {
    const q = await e.open();
    const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s");
    let n = 0;
    const ended = [];
    const got = await consume(e, q, 3, async () => {
      await slowFirst(n++);
      ended.push(Date.now());
    });
    assert.ok(grid(got, t0), JSON.stringify(got.map((d) => d.deadline - t0)));
    assert.ok(got[1].deadline - t0 >= 400, `the catch-up run is due at ${got[1].deadline - t0}: it skipped too few`);
    // The latest occurrence at its hand-out, which came after the long run ended.
    assert.ok(got[1].deadline + 100 > ended[0], `the catch-up run is due at ${got[1].deadline - t0}: not the latest`);
    assert.ok(got[2].deadline > got[1].deadline);
    const [s] = await q.schedules();
    assert.ok(s.runs >= 3 && s.runs < 6, `${s.runs} runs: the missed occurrences do not run`);
  });

  test('catchUp "none": after a run that took several periods, none of the missed occurrences; the next on schedule', async (e) => {
    const q = await e.open();
    const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { catchUp: "none" });
    let n = 0;
    const ended = [];
    const got = await consume(e, q, 2, async () => {
      await slowFirst(n++);
      ended.push(Date.now());
    });
    assert.ok(grid(got, t0), JSON.stringify(got.map((d) => d.deadline - t0)));
    assert.ok(got[1].deadline > ended[0], `the next run is due at ${got[1].deadline - t0}, before the long run ended`);
  });

  test("an occurrence whose handler throws is retried like any item (job.schedule and job.deadline kept), and the schedule goes on", async (e) => {
    const q = await e.open();
    const { nextRun: t0 } = await q.schedule("s", { every: 200 }, "s", { catchUp: "all" });
    const got = await consume(
      e,
      q,
      4,
      (_v, job) => {
        if (job.deadline === t0 && job.attempt === 1) throw new Error("the first run fails once");
      },
      { retryDelayMs: 50 },
    );
    assert.deepEqual(
      got.map((d) => [d.id, d.schedule, d.deadline, d.attempt]),
      [
        [`s@${t0}`, "s", t0, 1],
        [`s@${t0}`, "s", t0, 2], // job.deadline: the occurrence's due time, on a retry too
        [`s@${t0 + 200}`, "s", t0 + 200, 1],
        [`s@${t0 + 400}`, "s", t0 + 400, 1],
      ],
    );
  });

  test("overlap false covers retries: while an occurrence waits for its retry, the occurrences that come due are skipped and counted, and the schedule goes on after it", async (e) => {
    const q = await e.open();
    const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s");
    const got = await consume(
      e,
      q,
      4,
      (_v, job) => {
        if (job.deadline === t0 && job.attempt === 1) throw new Error("the first run fails once");
      },
      { retryDelayMs: 450 },
    );
    const runs = got.map((d) => [(d.deadline - t0) / 100, d.attempt]);
    assert.deepEqual(runs.slice(0, 2), [
      [0, 1],
      [0, 2],
    ]);
    // Occurrences 1 .. 4 came due while occurrence 0 waited for its retry (450 ms on).
    const [next, after] = runs.slice(2);
    assert.ok(next[0] >= 4 && next[1] === 1, JSON.stringify(runs));
    assert.deepEqual(after, [next[0] + 1, 1], JSON.stringify(runs));
    for (const d of got.slice(2)) assert.ok(d.at >= got[1].at, "an occurrence ran before the retry");
    const [s] = await q.schedules();
    assert.ok(s.skipped >= next[0] - 1, `skipped ${s.skipped}: ${JSON.stringify(runs)}`);
    assert.equal(s.runs + s.skipped, s.lastRun === undefined ? 0 : (s.lastRun - t0) / 100 + 1);
  });

  test("instants every engine holds (to 2189): a start or first occurrence outside them is refused at the call, naming it; a first occurrence in its last hour is kept", async (e) => {
    const q = await e.open();
    const R = "RangeError";
    const late = Date.UTC(2188, 11, 31, 23, 59);
    await checkBadCalls(e, q, [
      [(q) => q.schedule("d", { every: 10 }, 1, { start: -1e17 }), R, /^start\b/],
      [(q) => q.schedule("d", { every: 10 }, 1, { start: 9e15 }), R, /^start\b/],
      [(q) => q.schedule("d", { every: 10 }, 1, { start: new Date(Date.UTC(2300, 0, 1)) }), R, /^start\b/],
      [(q) => q.schedule("d", { every: 8.64e15 }, 1), R, /^rule\.every\b/],
      [(q) => q.schedule("d", { every: 2 ** 60 }, 1), R, /^rule\.every\b/],
      [(q) => q.schedule("d", { cron: "* * * * *" }, 1, { start: 9e15 }), R, /^start\b/],
      [(q) => q.schedule("d", { cron: "0 0 2 1 *" }, 1, { start: late }), R, /^start: the schedule has no occurrence/],
      [(q) => q.schedule("d", { cron: "0 0 30 2 *" }, 1), R, /^rule\.cron "0 0 30 2 \*" has no occurrence/],
    ]);
    // An every schedule whose first occurrence is the last one before the end: it is kept, and
    // its next occurrence (after 2189) does not exist.
    const info = await q.schedule("end", { every: HOUR }, 1, { start: Date.UTC(2188, 11, 31, 23, 30) });
    assert.equal(info.nextRun, Date.UTC(2188, 11, 31, 23, 30));
  });

  test("bad arguments to schedule and unschedule reject with a TypeError or RangeError that names them, and change nothing", async (e) => {
    const q = await e.open();
    await q.schedule("kept", { every: HOUR }, { kept: true });
    const T = "TypeError";
    const R = "RangeError";
    const every = { every: 1000 };
    await checkBadCalls(e, q, [
      [(q) => q.schedule(5, every, 1), T, /^id\b/],
      [(q) => q.schedule("", every, 1), R, /^id\b/],
      [(q) => q.schedule("x".repeat(481), every, 1), R, /^id\b/],
      [(q) => q.schedule("\uD800", every, 1), R, /^id\b/],
      [(q) => q.schedule("s", null, 1), T, /^rule\b/],
      [(q) => q.schedule("s", "every minute", 1), T, /^rule\b/],
      [(q) => q.schedule("s", {}, 1), T, /^rule\b/],
      [(q) => q.schedule("s", { every: 10, cron: "* * * * *" }, 1), T, /^rule\b/],
      [(q) => q.schedule("s", { evry: 10 }, 1), T, /\bevry\b/],
      [(q) => q.schedule("s", { every: "10" }, 1), T, /^rule\.every\b/],
      [(q) => q.schedule("s", { every: 0 }, 1), R, /^rule\.every\b/],
      [(q) => q.schedule("s", { every: 1.5 }, 1), R, /^rule\.every\b/],
      [(q) => q.schedule("s", { every: Number.NaN }, 1), R, /^rule\.every\b/],
      [(q) => q.schedule("s", { every: 10, timezone: "UTC" }, 1), T, /^rule\.timezone\b/],
      [(q) => q.schedule("s", { cron: 5 }, 1), T, /^rule\.cron\b/],
      [(q) => q.schedule("s", { cron: "not cron" }, 1), T, /^rule\.cron\b/],
      [(q) => q.schedule("s", { cron: "61 * * * *" }, 1), R, /^rule\.cron\b/],
      [(q) => q.schedule("s", { cron: "0 0 30 2 *" }, 1), R, /^rule\.cron\b.*no occurrence/],
      [(q) => q.schedule("s", { cron: "* * * * *", timezone: 5 }, 1), T, /^rule\.timezone\b/],
      [(q) => q.schedule("s", { cron: "* * * * *", timezone: "Mars/Olympus" }, 1), R, /^rule\.timezone\b/],
      [(q) => q.schedule("s", every, undefined), T, /^value\b/],
      ...e.unstorable.map(([, value, path]) => [
        (q) => q.schedule("s", every, value),
        T,
        new RegExp(`^value${path.replace(/[.[\]]/g, "\\$&")}`),
      ]),
      [(q) => q.schedule("s", every, 1, null), T, /^options\b/],
      [(q) => q.schedule("s", every, 1, { catchup: "all" }), T, /\bcatchup\b/],
      [(q) => q.schedule("s", every, 1, { catchUp: "some" }), R, /\bcatchUp\b/],
      [(q) => q.schedule("s", every, 1, { catchUp: 1 }), T, /\bcatchUp\b/],
      [(q) => q.schedule("s", every, 1, { overlap: "yes" }), T, /\boverlap\b/],
      [(q) => q.schedule("s", every, 1, { start: "soon" }), T, /^start\b/],
      [(q) => q.schedule("s", every, 1, { start: new Date(Number.NaN) }), R, /^start\b/],
      [(q) => q.schedule("kept", { every: -5 }, 1), R, /^rule\.every\b/],
      [(q) => q.unschedule(5), T, /^id\b/],
      [(q) => q.unschedule(""), R, /^id\b/],
      [(q) => q.schedule("s", every, 1, { maxRuns: 0 }), R, /^options\.maxRuns\b/],
      [(q) => q.schedule("s", every, 1, { maxRuns: "3" }), T, /^options\.maxRuns\b/],
      [(q) => q.schedule("s", every, 1, { stopAt: "soon" }), T, /^options\.stopAt\b/],
      [(q) => q.schedule("s", every, 1, { stopAt: 9e15 }), R, /^options\.stopAt must be an instant/],
      [(q) => q.schedule("s", every, 1, { stopAt: Date.now() - HOUR }), R, /^options\.stopAt .* is before/],
      [(q) => q.schedule("s", every, 1, { maxruns: 3 }), T, /\bmaxruns\b.*maxRuns/],
      [(q) => q.nextRuns("kept", 0), R, /^n must be/],
      [(q) => q.nextRuns("kept", 101), R, /^n must be/],
      [(q) => q.nextRuns("kept", "3"), T, /^n must be/],
      [(q) => q.nextRuns(5, 3), T, /^id\b/],
      [(q) => q.trigger(""), R, /^id\b/],
      [(q) => q.pauseSchedule(5), T, /^id\b/],
      [(q) => q.resumeSchedule(""), R, /^id\b/],
    ]);
    assert.deepEqual(
      (await q.schedules()).map((s) => [s.id, s.value]),
      [["kept", { kept: true }]],
    );
  });

  test("maxRuns: the schedule ends after its last run, listed with no next run and no occurrence pending; nextRuns stops there", async (e) => {
    const q = await e.open();
    const info = await q.schedule("thrice", { every: 60 }, "t", { maxRuns: 3, catchUp: "all" });
    assert.equal(info.maxRuns, 3);
    assert.deepEqual(
      await q.nextRuns("thrice", 10),
      [0, 60, 120].map((d) => info.nextRun + d),
    );
    const got = await consume(e, q, 3);
    assert.deepEqual(shape(got, info.nextRun), [
      ["thrice", 0, 1],
      ["thrice", 60, 1],
      ["thrice", 120, 1],
    ]);
    await sleep(300); // long enough for a fourth occurrence, were there one
    const [s] = await q.schedules();
    assert.deepEqual([s.id, s.runs, s.nextRun], ["thrice", 3, undefined]);
    assert.equal(await q.size(), 0, "no occurrence pending");
    assert.deepEqual(await q.nextRuns("thrice", 5), []);
    assert.equal(await q.trigger("thrice"), false, "an ended schedule does not run");
  });

  test("stopAt: no occurrence after it; nextRuns previews up to it; the schedule ends at the last one before it", async (e) => {
    const q = await e.open();
    const start = Date.now() + 200;
    const info = await q.schedule("until", { every: 100 }, "u", { start, stopAt: new Date(start + 250) });
    assert.equal(info.stopAt, start + 250);
    assert.deepEqual(await q.nextRuns("until", 10), [start, start + 100, start + 200]);
    const got = await consume(e, q, 3);
    assert.deepEqual(shape(got, start), [
      ["until", 0, 1],
      ["until", 100, 1],
      ["until", 200, 1],
    ]);
    await sleep(300);
    const [s] = await q.schedules();
    assert.deepEqual([s.runs, s.nextRun], [3, undefined]);
    assert.equal(await q.size(), 0);
  });

  test("trigger(id): one extra run now that counts and leaves the pending occurrence; with overlap false, false while a run lasts", async (e) => {
    const q = await e.open();
    const info = await q.schedule("report", { every: HOUR }, { kind: "report" });
    const before = Date.now();
    assert.equal(await q.trigger("report"), true);
    assert.equal(await q.trigger("nobody"), false);
    const [s] = await q.schedules();
    assert.equal(s.runs, 1, "the run counts when triggered");
    assert.ok(s.lastRun >= before - 1000 && s.lastRun <= Date.now() + 1000, `lastRun ${s.lastRun - before}`);
    assert.equal(s.nextRun, info.nextRun, "the pending occurrence stays");
    assert.equal(await q.trigger("report"), false, "overlap false: the triggered run lasts until it is done");
    const [got] = await consume(e, q, 1);
    assert.deepEqual(
      [got.schedule, got.deadline, got.attempt, got.value],
      ["report", s.lastRun, 1, { kind: "report" }],
    );
    assert.equal(got.id, `report@${s.lastRun}`);
    await sleep(100); // its ack stored
    assert.equal(await q.trigger("report"), true, "the run ended: it may run again");
    assert.equal((await q.schedules())[0].runs, 2);
  });

  test("pauseSchedule(id): no occurrence placed while paused; resumeSchedule(id) places the one it waited for, catchUp deciding", async (e) => {
    const q = await e.open();
    const info = await q.schedule("p", { every: 80 }, "p", { catchUp: "one" });
    assert.equal(await q.pauseSchedule("p"), true);
    assert.equal(await q.pauseSchedule("p"), false, "paused already");
    assert.equal(await q.pauseSchedule("nobody"), false);
    assert.equal(await q.size(), 0, "no occurrence pending while paused");
    let [s] = await q.schedules();
    assert.equal(s.paused, true);
    assert.equal(s.nextRun, info.nextRun, "the occurrence it waits for");
    const again = await q.schedule("p", { every: 80 }, "p", { catchUp: "one" });
    assert.deepEqual([again.paused, again.nextRun], [true, info.nextRun], "schedule() again keeps it paused, waiting");
    assert.equal(await q.size(), 0);
    await sleep(400); // several periods: it falls behind
    assert.equal(await q.size(), 0, "nothing was placed meanwhile");
    assert.equal(await q.resumeSchedule("p"), true);
    assert.equal(await q.resumeSchedule("p"), false, "not paused");
    const resumed = Date.now();
    const [got] = await consume(e, q, 1);
    assert.equal(got.schedule, "p");
    assert.ok(got.deadline > info.nextRun + 80, 'catchUp "one": the latest missed occurrence, not the first');
    assert.equal((got.deadline - info.nextRun) % 80, 0, "in phase");
    assert.ok(got.deadline <= resumed + 1000);
    [s] = await q.schedules();
    assert.equal(s.paused, false);
    assert.equal(s.runs, 1);
  });

  test("close(): schedule, unschedule and schedules reject with ClosedError", async (e) => {
    const q = await e.open();
    await q.schedule("s", { every: HOUR }, 1);
    await q.close();
    for (const call of [() => q.schedule("t", { every: 10 }, 1), () => q.unschedule("s"), () => q.schedules()])
      await assert.rejects(call(), { name: "ClosedError" }, call.toString());
  });
}
