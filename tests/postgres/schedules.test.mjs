// Schedules on Postgres beyond the contract: a per-second cron consumed by two consumers at
// once (as two processes would: two queue objects on two pools), each occurrence handed out
// once, on the second, none skipped and none early; the successors the two compute are
// placed once (the compare-and-set).
import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { EARLIEST_INSTANT, LATEST_INSTANT } from "../../js/arguments.js";
import { EveryRule } from "../../js/schedule/rule.js";
import { fresh, privatePostgres } from "./fixture.mjs";

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

test("maxRuns and stopAt, not kept on Postgres yet: refused with a TypeError naming them, and nothing changed", async () => {
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("controls") });
  await q.migrate();
  await q.schedule("kept", { every: HOUR }, "v1");
  for (const opts of [{ maxRuns: 3 }, { stopAt: Date.now() + 2 * HOUR }]) {
    const [k] = Object.keys(opts);
    await assert.rejects(q.schedule("kept", { every: 1000 }, "v2", opts), (e) => {
      assert.equal(e.name, "TypeError");
      assert.match(e.message, new RegExp(`^options\\.${k} is not supported by PostgresDelayQueue yet`));
      return true;
    });
    await assert.rejects(q.schedule("new", { every: 1000 }, "n", opts), TypeError);
  }
  const list = await q.schedules();
  assert.deepEqual(
    list.map((s) => [s.id, s.every, s.value]),
    [["kept", HOUR, "v1"]],
  );
  assert.equal(await q.size(), 1);
  await q.close();
});
