// Schedules on Redis with worker processes (tests/redis/worker.mjs) and faults: a worker killed
// with kill -9 and Redis crashing and restarting from its append-only file in the middle of a
// 20 s run; every process stopped for 3 s (SIGSTOP), then resumed, for each catchUp; a
// 3-master cluster. The chain must not break, no occurrence may be handed out twice as an
// occurrence (a second delivery comes only from a lease that ran out, with attempt > 1), and
// none may come out early.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startCluster, startRedis } from "../../tools/redis-server.mjs";
import { startWorker, until } from "./fleet.mjs";

const say = (...a) => console.log(`# ${a.join(" ")}`);

/** Every delivery of the workers, as { queue, id, at, due, attempt, schedule }. */
function deliveries(workers) {
  return workers.flatMap((w) =>
    w.got.map(([queue, id, at, due, attempt, , schedule]) => ({ queue, id, at, due, attempt, schedule })),
  );
}

/**
 * The checks every run makes of the deliveries of schedule `id` (every `period` ms from
 * `start`): each is an occurrence (its id and schedule), none early, each occurrence handed
 * out at most once as attempt 1. Returns the occurrence numbers delivered, sorted, once each.
 */
function occurrences(got, id, start, period) {
  const firsts = new Map();
  for (const d of got.filter((x) => x.schedule === id)) {
    assert.equal(d.id, `${id}@${d.due}`);
    assert.ok(d.at >= Math.floor(d.due), `${d.id} came out ${d.due - d.at} ms early`);
    assert.equal((d.due - start) % period, 0, `${d.id} is not on the schedule's grid`);
    if (d.attempt === 1) {
      assert.ok(!firsts.has(d.due), `${d.id} was handed out twice as an occurrence`);
      firsts.set(d.due, d);
    }
  }
  const ks = new Set(got.filter((x) => x.schedule === id).map((d) => (d.due - start) / period));
  return [...ks].sort((a, b) => a - b);
}

/** Whether ks is 0, 1, ..., n. */
const contiguous = (ks) => ks.every((k, i) => k === i);

test("3 workers, a schedule every 200 ms for 20 s, a worker kill -9'd and Redis restarted from its AOF: every occurrence delivered, none twice as an occurrence, none early", async () => {
  const redis = await startRedis({ aof: true });
  const workers = [];
  try {
    // Each run takes 120 ms, so that the worker killed is running one.
    const base = {
      url: redis.url,
      names: ["beats"],
      mode: "slow",
      handleMs: 120,
      concurrency: 4,
      visibilityTimeout: 1000,
    };
    for (let i = 0; i < 3; i++) workers.push(startWorker(base));
    await Promise.all(workers.map((w) => w.ready));
    const q = new RedisDelayQueue({ redis: redis.url, name: "beats", onerror: () => {} });
    // catchUp "all": what came due while Redis was down runs too; overlap: true, so that the
    // occurrence the killed worker held does not make the next ones overruns (skipped).
    const start = Math.ceil(Date.now() / 200) * 200 + 400;
    await q.schedule("beat", { every: 200 }, { beat: true }, { catchUp: "all", overlap: true, start });
    // At 5 s, the worker that took the latest occurrence, while it runs it.
    await sleep(start + 5000 - Date.now());
    let victim;
    await until(
      () => (victim = workers.find((w) => w.got.length > 0 && Date.now() - w.got.at(-1)[2] < 60)),
      5000,
      "a worker running an occurrence",
    );
    victim.child.kill("SIGKILL");
    const [, heldId] = victim.got.at(-1);
    await sleep(start + 10_000 - Date.now());
    const crash = Date.now();
    await redis.kill("SIGKILL");
    await sleep(300);
    await redis.start(); // from the append-only file (appendfsync always)
    const back = Date.now() - crash;
    await sleep(start + 20_000 - Date.now());
    const [{ lastRun }] = await q.schedules();
    assert.equal(await q.unschedule("beat"), true);
    const last = (lastRun - start) / 200;
    const live = workers.filter((w) => w !== victim);
    await until(() => occurrences(deliveries(live), "beat", start, 200).at(-1) >= last, 15_000, "the last occurrence");
    await sleep(1500); // a lease that ran out would bring its occurrence back meanwhile
    await Promise.all(live.map((w) => w.stop()));
    const got = deliveries(workers);
    const ks = occurrences(got, "beat", start, 200);
    assert.ok(
      contiguous(ks),
      `occurrences missing: ${[...Array(ks.at(-1) + 1).keys()].filter((k) => !ks.includes(k))}`,
    );
    assert.ok(ks.length >= 95, `only ${ks.length} occurrences in 20 s`);
    const again = got.filter((d) => d.attempt > 1);
    assert.ok(
      again.some((d) => d.id === heldId),
      `${heldId}, which the killed worker was running, came back with its lease`,
    );
    const late = got
      .filter((d) => d.attempt === 1)
      .map((d) => d.at - d.due)
      .sort((a, b) => a - b);
    say(
      `${ks.length} occurrences, each delivered; ${again.length} delivered again after a lease ran out`,
      `(the killed worker was running ${heldId}; Redis was back ${back} ms after the crash);`,
      `lateness p50 ${late[late.length >> 1]} ms, p99 ${late[Math.floor(late.length * 0.99)]} ms`,
    );
    await q.close();
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await redis.stop();
  }
});

test("every process stopped for 3 s, then resumed: catchUp all runs every missed occurrence, one the latest once, none none", async () => {
  const redis = await startRedis();
  const workers = [];
  try {
    const base = { url: redis.url, names: ["catchup"], mode: "process", concurrency: 4 };
    for (let i = 0; i < 2; i++) workers.push(startWorker(base));
    await Promise.all(workers.map((w) => w.ready));
    const q = new RedisDelayQueue({ redis: redis.url, name: "catchup" });
    const P = 400;
    const start = Math.ceil(Date.now() / P) * P + 2 * P;
    for (const mode of ["all", "one", "none"]) await q.schedule(mode, { every: P }, mode, { catchUp: mode, start });
    // Stopped halfway between occurrences 2 and 3, resumed halfway between 10 and 11.
    await sleep(start + 2.5 * P - Date.now());
    for (const w of workers) w.child.kill("SIGSTOP");
    await sleep(start + 10.5 * P - Date.now());
    const resumed = Date.now();
    for (const w of workers) w.child.kill("SIGCONT");
    await sleep(start + 13.5 * P - Date.now());
    await Promise.all(workers.map((w) => w.stop()));
    const got = deliveries(workers);
    const ks = Object.fromEntries(["all", "one", "none"].map((m) => [m, occurrences(got, m, start, P)]));
    assert.deepEqual(ks.all.slice(0, 14), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], "all: every occurrence");
    // one: the latest missed occurrence (10) once, handed out as soon as the workers resumed.
    assert.deepEqual(ks.one.slice(0, 6), [0, 1, 2, 10, 11, 12], "one");
    const caughtUp = got.find((d) => d.schedule === "one" && d.due === start + 10 * P);
    assert.ok(caughtUp.at - resumed < P / 2, `the catch-up came ${caughtUp.at - resumed} ms after resuming`);
    assert.deepEqual(ks.none.slice(0, 5), [0, 1, 2, 11, 12], "none");
    const late = (m, k) => got.find((d) => d.schedule === m && d.due === start + k * P).at - (start + k * P);
    say(
      `resumed after ${resumed - (start + 2.5 * P)} ms stopped; all's backlog, one's catch-up ${late("one", 10)} ms after its due time, none's next ${late("none", 11)} ms late`,
    );
    const stats = Object.fromEntries((await q.schedules()).map((s) => [s.id, s.runs]));
    assert.ok(stats.one < stats.all && stats.none < stats.one, JSON.stringify(stats));
    await q.close();
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await redis.stop();
  }
});

test("Redis Cluster (3 masters): an every and a cron schedule, 2 workers: each occurrence once, in order, never early", async () => {
  const cluster = await startCluster(3);
  const workers = [];
  try {
    const names = ["beats-a", "beats-b"];
    const base = { cluster: cluster.seeds, names, mode: "process", concurrency: 4 };
    for (let i = 0; i < 2; i++) workers.push(startWorker(base));
    await Promise.all(workers.map((w) => w.ready));
    const client = new Cluster(cluster.seeds, { enableAutoPipelining: true });
    const [a, b] = names.map((name) => new RedisDelayQueue({ redis: client, name }));
    const start = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    await a.schedule("every", { every: 100 }, "e", { start, catchUp: "all" });
    await b.schedule("cron", { cron: "* * * * * *", timezone: "Australia/Lord_Howe" }, "c", { start, catchUp: "all" });
    await sleep(start + 3050 - Date.now());
    await a.unschedule("every");
    await b.unschedule("cron");
    await sleep(300);
    await Promise.all(workers.map((w) => w.stop()));
    const got = deliveries(workers);
    const every = occurrences(got, "every", start, 100);
    const cron = occurrences(got, "cron", start, 1000);
    assert.ok(contiguous(every) && every.length >= 29, `every: ${every}`);
    assert.deepEqual(cron, [0, 1, 2, 3]);
    assert.equal(got.filter((d) => d.attempt > 1).length, 0);
    assert.deepEqual([...new Set(got.map((d) => d.queue))].sort(), names);
    await Promise.all([a.close(), b.close()]);
    await client.quit();
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await cluster.stop();
  }
});
