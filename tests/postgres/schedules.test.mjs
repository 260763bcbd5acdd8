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
import { migrations } from "../../js/postgres/migrate.js";
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

test("a schedule stored before migration 3 reads after it (no limits, not paused) and its chain goes on", async () => {
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
  assert.deepEqual(await q.migrate(), [3]);
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
