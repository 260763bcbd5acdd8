// Schedules on Postgres beyond the contract: a per-second cron consumed by two consumers at
// once (as two processes would: two queue objects on two pools), each occurrence handed out
// once, on the second, none skipped and none early; the successors the two compute are
// placed once (the compare-and-set). The controls where Postgres computes them its own way: a
// paused cron schedule's catch-up at resume, a run now that ends the schedule, and a schedule
// stored before migration 3 (no limits, not paused) read and run after it.
import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { EARLIEST_INSTANT, LATEST_INSTANT } from "../../js/engine/arguments.js";
import { migrations } from "../../js/postgres/migrate.js";
import { EveryRule } from "../../js/schedule/rule.js";
import { fresh, privatePostgres } from "./fixture.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The first n deliveries of q's process(), acked; rejects after 20 s. */
function consume(q, n) {
  return new Promise((resolve, reject) => {
    const got = [];
    const timer = setTimeout(() => reject(new Error(`${got.length} of ${n} deliveries in 20 s`)), 20_000);
    const worker = q.process((value, job) => {
      got.push({ id: job.id, value, due: job.deadline, at: Date.now() });
      if (got.length === n) {
        clearTimeout(timer);
        worker.close().then(() => resolve(got), reject);
      }
    });
  });
}

const db = privatePostgres();
const HOUR = 3_600_000;

test("a per-second cron with two consumers: each occurrence once, consecutive seconds, never early", async () => {
  const name = fresh("cron");
  const pools = [new pg.Pool({ connectionString: db.url }), new pg.Pool({ connectionString: db.url })];
  const queues = pools.map((pool) => new PostgresDelayQueue({ pg: pool, name }));
  await queues[0].migrate();
  const info = await queues[0].schedule("tick", { cron: "* * * * * *", timezone: "Europe/Berlin" }, "tick", {
    catchUp: "all",
  });
  const got = [];
  const workers = queues.map((q, i) =>
    q.process((_v, job) => {
      got.push({ by: i, due: job.deadline, at: Date.now(), id: job.id });
    }),
  );
  await new Promise((r) => setTimeout(r, 4500));
  await Promise.all(workers.map((w) => w.close()));
  const dues = got.map((d) => d.due).sort((a, b) => a - b);
  assert.ok(dues.length >= 3, `${dues.length} occurrences in 4.5 s`);
  assert.equal(new Set(dues).size, dues.length, `an occurrence handed out twice: ${dues}`);
  for (let i = 1; i < dues.length; i++) assert.equal(dues[i] - dues[i - 1], 1000, `consecutive seconds: ${dues}`);
  assert.equal(dues[0], info.nextRun);
  for (const d of got) {
    assert.ok(d.at >= d.due, `${d.id} handed out ${d.due - d.at} ms early`);
    assert.equal(d.id, `tick@${d.due}`);
  }
  const [s] = await queues[1].schedules();
  assert.equal(s.runs, dues.length);
  assert.equal(await queues[1].size(), 1, "one pending occurrence");
  await Promise.all(queues.map((q) => q.close()));
  await Promise.all(pools.map((p) => p.end()));
});

test('overlap false, catchUp "all": after downtime, the missed occurrences run one after another (each waits for the ack before it), none skipped', async () => {
  const name = fresh("all");
  const q = new PostgresDelayQueue({ pg: db.pool, name, visibilityTimeout: 5000 });
  await q.migrate();
  const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { catchUp: "all" });
  await new Promise((r) => setTimeout(r, t0 - Date.now() + 650)); // no consumer: 0..6 are due
  // The missed runs take 60 ms each (two at once would show), the later ones no time.
  const started = Date.now();
  const runs = [];
  let running = 0;
  let most = 0;
  const w = q.process(
    async (_v, job) => {
      most = Math.max(most, ++running);
      const run = { due: job.deadline, start: Date.now(), end: 0 };
      runs.push(run);
      if (job.deadline < started) await new Promise((r) => setTimeout(r, 60));
      run.end = Date.now();
      running--;
    },
    { concurrency: 4 },
  );
  // Long enough for 8 runs on a loaded machine: the 7 missed ones chained by their acks.
  await new Promise((r) => setTimeout(r, 3000));
  await w.close();
  const [s] = await q.schedules();
  assert.equal(s.skipped, 0);
  assert.equal(most, 1, "two runs at once");
  const dues = runs.map((r) => (r.due - t0) / 100);
  assert.deepEqual(
    dues,
    dues.map((_d, i) => i),
  );
  assert.ok(dues.length >= 8, `${dues.length} runs`);
  // Each waiting run starts when the one before it is acked, not when its lease would run out.
  for (let i = 1; i < 7; i++) {
    const gap = runs[i].start - runs[i - 1].end;
    assert.ok(gap < 2000, `run ${i} started ${gap} ms after run ${i - 1} ended`);
  }
  await q.close();
});

test("overlap false: an occurrence brought back from the dead letters waits while another run of its schedule is leased, and runs after its ack", async () => {
  const name = fresh("retry");
  const q = new PostgresDelayQueue({ pg: db.pool, name, maxAttempts: 1, visibilityTimeout: 5000 });
  await q.migrate();
  const { nextRun: t0 } = await q.schedule("s", { every: 200 }, "s");
  const runs = [];
  let running = 0;
  let most = 0;
  let dead;
  const w = q.process(
    async (_v, job) => {
      most = Math.max(most, ++running);
      const run = { due: job.deadline, attempt: job.attempt, start: Date.now(), end: 0 };
      runs.push(run);
      try {
        if (job.deadline === t0) throw new Error("the first run fails: a dead letter");
        if (job.deadline === t0 + 200) {
          // The first comes back while this run holds its lease.
          await dead;
          assert.equal(await q.retryDead(`s@${t0}`), true);
          await new Promise((r) => setTimeout(r, 800));
        }
      } finally {
        run.end = Date.now();
        running--;
      }
    },
    { concurrency: 2 },
  );
  dead = (async () => {
    while ((await q.deadLetters()).items.length === 0) await new Promise((r) => setTimeout(r, 20));
  })();
  const end = Date.now() + 10_000;
  while (runs.filter((r) => r.due === t0).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  await w.close();
  assert.equal(most, 1, `two runs at once: ${JSON.stringify(runs.map((r) => [(r.due - t0) / 200, r.start - t0]))}`);
  const second = runs.find((r) => r.due === t0 + 200);
  const again = runs.filter((r) => r.due === t0)[1];
  assert.ok(
    again,
    `the dead letter ran again: ${JSON.stringify(runs.map((r) => [(r.due - t0) / 200, r.attempt, r.start - t0, r.end - t0]))}`,
  );
  assert.ok(again.start >= second.end, "the retried occurrence waited for the run in flight");
  await q.close();
});

test("overlap false: a catch-up waiting for a run, then schedule() with a new rule: the run's ack leaves the new rule's first occurrence at its due time, never early", async () => {
  const name = fresh("replaced");
  const q = new PostgresDelayQueue({ pg: db.pool, name, visibilityTimeout: 5000 });
  await q.migrate();
  const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { catchUp: "all" });
  await new Promise((r) => setTimeout(r, t0 - Date.now() + 350)); // 0..3 are due
  const waiting = async () =>
    (await db.pool.query("SELECT wait FROM tarry.schedules WHERE queue = $1", [name])).rows[0].wait;
  let replaced;
  const w = q.process(
    async (_v, job) => {
      if (job.deadline !== t0) return;
      // Occurrence 1 comes due during this run and waits for it; then the rule changes.
      const end = Date.now() + 5000;
      while (!(await waiting()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      replaced = await q.schedule("s", { every: HOUR }, "s2");
    },
    { concurrency: 2 },
  );
  const end = Date.now() + 10_000;
  while ((replaced === undefined || (await q.stats()).inFlight > 0) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300)); // a take after the ack, had it made the occurrence due
  await w.close();
  assert.ok(replaced, "the rule was replaced while occurrence 1 waited");
  const delay = await q.delayOf(`s@${replaced.nextRun}`);
  assert.ok(delay > HOUR - 60_000, `the new rule's first occurrence is due in ${delay} ms`);
  const [s] = await q.schedules();
  assert.equal(s.runs, 1, "nothing of the new rule ran");
  await q.close();
});

test("every in SQL is js/schedule/rule.js EveryRule: the same next and latest occurrence on random cases, none after the latest instant", async () => {
  await new PostgresDelayQueue({ pg: db.pool, name: fresh("every") }).migrate();
  const [{ latest }] = (await db.pool.query("SELECT tarry.latest_instant() AS latest")).rows;
  assert.equal(latest, LATEST_INSTANT);
  // A seeded generator: a failure names a case that comes back.
  let seed = 20261202;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = (a) => a[Math.floor(random() * a.length)];
  const periods = [1, 7, 100, 1000, 60_000, 86_400_000, 2 ** 40 + 3, LATEST_INSTANT - EARLIEST_INSTANT];
  const starts = [0, Date.UTC(2026, 0, 1), EARLIEST_INSTANT, LATEST_INSTANT, LATEST_INSTANT - 1000, -1];
  const cases = [];
  for (let i = 0; i < 3000; i++) {
    const start =
      random() < 0.5 ? pick(starts) : Math.round(EARLIEST_INSTANT + random() * (LATEST_INSTANT - EARLIEST_INSTANT));
    const period = random() < 0.5 ? pick(periods) : 1 + Math.floor(random() * 1e9);
    const base = pick([start, LATEST_INSTANT, Date.now(), start + period * Math.floor(random() * 1000)]);
    const after = base + pick([0, -1, 1, 0.25, -0.5, period, -period, random() * period, random() * 1e12 - 5e11]);
    cases.push([start, period, Math.max(EARLIEST_INSTANT, Math.min(after, LATEST_INSTANT + 1e9))]);
  }
  const { rows } = await db.pool.query(
    `SELECT tarry.every_next(s, p, a) AS next, tarry.every_latest(s, p, a) AS latest
       FROM unnest($1::float8[], $2::float8[], $3::float8[]) WITH ORDINALITY AS c(s, p, a, i) ORDER BY i`,
    [cases.map((c) => c[0]), cases.map((c) => c[1]), cases.map((c) => c[2])],
  );
  cases.forEach(([start, period, after], i) => {
    const rule = new EveryRule(period, start);
    const want = [rule.next(after) ?? null, rule.latest(after) ?? null];
    assert.deepEqual([rows[i].next, rows[i].latest], want, `every ${period} from ${start}, at ${after}`);
  });
});

test('resumeSchedule() on a cron schedule that fell behind while paused: catchUp "one" runs the latest missed occurrence, never early, then goes on', async () => {
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("resume") });
  await q.migrate();
  const info = await q.schedule("c", { cron: "* * * * * *" }, "c", { catchUp: "one" });
  assert.equal(await q.pauseSchedule("c"), true);
  await sleep(info.nextRun - Date.now() + 2500); // two occurrences and more missed
  assert.equal(await q.size(), 0, "nothing placed while paused");
  const resumed = Date.now();
  assert.equal(await q.resumeSchedule("c"), true);
  const [got] = await consume(q, 1);
  assert.ok(got.due >= info.nextRun + 2000, `the latest missed occurrence, not the first: ${got.due - info.nextRun}`);
  assert.equal(got.due % 1000, 0, "on the second");
  assert.ok(got.due <= resumed + 1000, `${got.due - resumed} ms after the resume`);
  assert.ok(got.at >= got.due, `handed out ${got.due - got.at} ms early`);
  const [s] = await q.schedules();
  assert.deepEqual([s.paused, s.runs, s.lastRun], [false, 1, got.due]);
  assert.ok(s.nextRun > got.due, "the chain goes on");
  await q.close();
});

test("pauseSchedule() on a cron schedule whose occurrences are in flight and whose successor is not computed yet: paused, and resumeSchedule() goes on", async () => {
  const name = fresh("asked");
  const q = new PostgresDelayQueue({ pg: db.pool, name });
  await q.migrate();
  await q.schedule("c", { cron: "* * * * * *" }, "c", { overlap: true }); // runs do not wait for those in flight
  // Occurrences leased by takes whose questions nobody answers (a consumer that died after its
  // take), until the schedule knows no next occurrence: a client has to compute it.
  const leased = [];
  const end = Date.now() + 10_000;
  while ((leased.length === 0 || (await q.schedules())[0].nextRun !== undefined) && Date.now() < end) {
    const { rows } = await db.pool.query(`SELECT kind, deadline FROM "tarry".take($1, 1, 60000, 5)`, [name]);
    for (const r of rows) if (r.kind === "t") leased.push(r.deadline);
    await sleep(50);
  }
  assert.ok(leased.length > 0, "an occurrence leased");
  assert.equal((await q.schedules())[0].nextRun, undefined, "no next occurrence known");
  assert.equal(await q.pauseSchedule("c"), true, "a running schedule pauses");
  assert.equal((await q.schedules())[0].paused, true);
  assert.equal(await q.resumeSchedule("c"), true);
  const [got] = await consume(q, 1);
  assert.ok(got.due > leased.at(-1), `the next occurrence after the one in flight: ${got.due - leased.at(-1)} ms`);
  assert.ok(got.at >= got.due, `handed out ${got.due - got.at} ms early`);
  await q.close();
});

test("trigger() that makes the last run (maxRuns) ends the schedule: the run is pending, no occurrence after it", async () => {
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("last") });
  await q.migrate();
  await q.schedule("once", { every: 3_600_000 }, "o", { maxRuns: 1 });
  assert.equal(await q.trigger("once"), true);
  const [s] = await q.schedules();
  assert.deepEqual([s.runs, s.nextRun, s.maxRuns], [1, undefined, 1]);
  const page = await q.pending();
  assert.deepEqual(
    page.items.map((it) => it.id),
    [`once@${s.lastRun}`],
  );
  assert.deepEqual(await q.nextRuns("once", 5), []);
  assert.equal(await q.trigger("once"), false, "ended");
  await q.close();
});

test("a schedule stored before migrations 3 and 4 reads after them (no limits, not paused) and its chain goes on", async () => {
  const schema = `old${process.pid}`;
  const client = await db.pool.connect();
  let due;
  try {
    await client.query("BEGIN");
    for (const m of (await migrations()).filter((m) => m.version <= 2))
      await client.query(m.text.replaceAll(':"schema"', `"${schema}"`));
    // As migration 2's schedule() wrote it: every 100 ms, its first occurrence placed.
    const { rows } = await client.query(`WITH t AS (SELECT ceil("${schema}".clock()) + 300 AS d),
      s AS (INSERT INTO "${schema}".schedules (queue, id, kind, period, start, catch_up, overlap, value, due, version)
        SELECT 'q', convert_to('old', 'UTF8'), 'e', 100, d, 'all', false, '"v"', d, 1 FROM t RETURNING due)
      SELECT d, "${schema}".place('q', convert_to('old', 'UTF8'), d, '"v"') FROM t`);
    due = rows[0].d;
    await client.query("COMMIT");
  } finally {
    client.release();
  }
  const q = new PostgresDelayQueue({ pg: db.pool, name: "q", schema });
  assert.deepEqual(
    await q.migrate(),
    (await migrations()).map((m) => m.version).filter((v) => v >= 3),
  );
  const [s] = await q.schedules();
  assert.deepEqual(
    [s.id, s.every, s.nextRun, s.maxRuns, s.stopAt, s.paused],
    ["old", 100, due, undefined, undefined, false],
  );
  assert.deepEqual(await q.nextRuns("old", 3), [due, due + 100, due + 200]);
  const got = await consume(q, 2);
  assert.deepEqual(
    got.map((d) => [d.id, d.value, d.due - due]),
    [
      [`old@${due}`, "v", 0],
      [`old@${due + 100}`, "v", 100],
    ],
  );
  assert.equal(await q.pauseSchedule("old"), true);
  assert.equal(await q.size(), 0);
  await q.close();
});
