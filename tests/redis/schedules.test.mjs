// Schedules on Redis, in one process against a private redis-server: overlap (skipped runs,
// and the catch-up that waits for the run before it), the chain with no client running, the
// cron successor computed by a client (across daylight-saving changes, through the real take
// and advance scripts), its compare-and-set, and a client that took a cron occurrence and died
// before computing the next one. The contract's cases (tests/contract) cover the rest; the
// fault runs with worker processes are in schedule-faults.test.mjs.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { cron } from "tarry-queue/cron";
import { RedisDelayQueue } from "tarry-queue/redis";
import { LUA } from "../../js/redis/lua.js";
import { KEY_NAMES } from "../../js/redis/keys.js";
import { startRedis } from "../../tools/redis-server.mjs";

let server;
let raw;
let serial = 0;
const queues = [];

before(async () => {
  server = await startRedis();
  raw = new Redis(server.url);
});

after(async () => {
  await Promise.all(queues.map((q) => q.close()));
  raw?.disconnect();
  await server?.stop();
});

function open(opts) {
  const q = new RedisDelayQueue({ redis: server.url, name: `sched-${++serial}`, ...opts });
  queues.push(q);
  return q;
}

/** Runs script `name` of tarry's (js/redis/lua.js) on `q`'s keys, as the queue would. */
function script(q, name, ...args) {
  const k = q.keys;
  const keys = KEY_NAMES.map((name) => k[name]);
  return raw.eval(LUA[name].source, keys.length, ...keys, ...args);
}

/** process() with `concurrency` slots and `handler`, recording each run: { due, start, end }. */
function run(q, handler, concurrency) {
  const runs = [];
  let active = 0;
  let most = 0;
  const worker = q.process(
    async (_value, job) => {
      const r = { due: job.deadline, schedule: job.schedule, attempt: job.attempt, start: Date.now(), end: 0 };
      runs.push(r);
      most = Math.max(most, ++active);
      try {
        await handler(r, runs.length - 1);
      } finally {
        active--;
        r.end = Date.now();
      }
    },
    { concurrency },
  );
  return { runs, most: () => most, close: () => worker.close() };
}

test("overlap false: with a second consumer free, occurrences that come due while a run runs are skipped and counted; overlap true runs them", async () => {
  for (const overlap of [false, true]) {
    const q = open();
    const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { overlap });
    const w = run(q, (_r, i) => (i === 0 ? sleep(350) : undefined), 2);
    await sleep(t0 - Date.now() + 750);
    await w.close();
    const [s] = await q.schedules();
    const dues = w.runs.map((r) => (r.due - t0) / 100);
    if (!overlap) {
      assert.equal(w.most(), 1, "two runs of the schedule at once");
      assert.ok(dues[1] >= 4, `after the long run: ${dues}`);
      // Every occurrence up to the last run either ran or was skipped, once.
      assert.equal(s.runs + s.skipped, dues.at(-1) + 1, `runs ${s.runs}, skipped ${s.skipped}, dues ${dues}`);
      assert.ok(s.skipped >= 2, `skipped ${s.skipped}`);
    } else {
      assert.equal(w.most(), 2);
      assert.equal(s.skipped, 0);
      assert.deepEqual(
        dues,
        dues.map((_d, i) => i),
      );
    }
    for (const r of w.runs) assert.ok(r.start >= Math.floor(r.due), "early");
  }
});

test('overlap false, catchUp "all": after downtime, the missed occurrences run one after another (each waits for the ack before it), none skipped', async () => {
  const q = open();
  const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s", { catchUp: "all" });
  await sleep(t0 - Date.now() + 650); // no consumer: 0..6 are due
  // The missed runs take 60 ms each (several at once would show), the later ones no time.
  const started = Date.now();
  const w = run(q, (r) => (r.due < started ? sleep(60) : undefined), 4);
  await sleep(1200);
  await w.close();
  const [s] = await q.schedules();
  assert.equal(s.skipped, 0);
  assert.equal(w.most(), 1, "two runs at once");
  const dues = w.runs.map((r) => (r.due - t0) / 100);
  assert.deepEqual(
    dues,
    dues.map((_d, i) => i),
  );
  assert.ok(dues.length >= 8, `${dues.length} runs`);
  // Each waiting run starts when the one before it is acked, not when its lease would run out.
  for (let i = 1; i < 7; i++) {
    const gap = w.runs[i].start - w.runs[i - 1].end;
    assert.ok(gap < 500, `run ${i} started ${gap} ms after run ${i - 1} ended`);
  }
});

test("no client running: the one pending occurrence stays; the first consumer gets the catch-up", async () => {
  const q = open();
  const { nextRun: t0 } = await q.schedule("s", { every: 50 }, "s");
  await sleep(t0 - Date.now() + 500);
  assert.equal(await q.size(), 1);
  assert.equal((await q.schedules())[0].nextRun, t0, "still the first occurrence");
  const job = await q.take({ timeout: 2000 });
  assert.equal(job.schedule, "s");
  assert.ok(job.deadline >= t0 + 500 - 50 && job.deadline <= Date.now(), `the latest missed: ${job.deadline - t0}`);
  await job.ack();
  assert.equal((await q.schedules())[0].nextRun, job.deadline + 50);
});

const iso = (t) => new Date(t).toISOString();

/**
 * A cron schedule whose chain starts at `first`, in the past (schedule() starts at now; the
 * upsert script is given `first` directly), catching up "all": a consumer then takes its
 * occurrences one by one, each successor computed by the client through the take and
 * advance scripts, as any cron occurrence's is.
 */
async function pastChain(q, expression, timezone, first) {
  const succ = cron(expression, { timezone }).next(first);
  const reply = await script(
    q,
    "scheduleUpsert",
    q.keys.channel,
    "c",
    "c",
    expression,
    "",
    timezone,
    "all",
    "0",
    '"c"',
    String(first),
    String(succ),
  );
  assert.equal(reply[1], 1);
  const dues = [];
  for (let i = 0; i < 5; i++) {
    const job = await q.take({ timeout: 5000 });
    assert.equal(job.schedule, "c");
    dues.push(iso(job.deadline));
    await job.ack();
  }
  return dues;
}

test("cron across daylight-saving changes: successive occurrences computed by the client, through the take and advance scripts", async () => {
  // New York, spring forward on 8 March 2026 (02:00 EST → 03:00 EDT): 02:30 does not exist.
  assert.deepEqual(await pastChain(open(), "30 2 * * *", "America/New_York", Date.parse("2026-03-06T07:30:00Z")), [
    "2026-03-06T07:30:00.000Z", // 02:30 EST
    "2026-03-07T07:30:00.000Z",
    "2026-03-08T07:00:00.000Z", // 03:00 EDT, the first instant after the gap
    "2026-03-09T06:30:00.000Z", // 02:30 EDT
    "2026-03-10T06:30:00.000Z",
  ]);
  // Fall back on 1 November 2026 (02:00 EDT → 01:00 EST): 01:30 happens twice, runs once.
  assert.deepEqual(await pastChain(open(), "30 1 * * *", "America/New_York", Date.parse("2026-10-30T05:30:00Z")), [
    "2026-10-30T05:30:00.000Z", // 01:30 EDT
    "2026-10-31T05:30:00.000Z",
    "2026-11-01T05:30:00.000Z", // the first 01:30 (EDT) only
    "2026-11-02T06:30:00.000Z", // 01:30 EST
    "2026-11-03T06:30:00.000Z",
  ]);
  // An hourly expression follows the wall clock: Berlin's repeated hour (25 October 2026,
  // 03:00 CEST → 02:00 CET) runs twice, each a real hour.
  assert.deepEqual(await pastChain(open(), "30 * * * *", "Europe/Berlin", Date.parse("2026-10-24T23:30:00Z")), [
    "2026-10-24T23:30:00.000Z", // 01:30 CEST
    "2026-10-25T00:30:00.000Z", // 02:30 CEST
    "2026-10-25T01:30:00.000Z", // 02:30 CET
    "2026-10-25T02:30:00.000Z", // 03:30 CET
    "2026-10-25T03:30:00.000Z",
  ]);
});

test("the advance script's compare-and-set: an answer for a due time the schedule has left is refused; of two answers for the same, the first is kept", async () => {
  const q = open();
  const { nextRun: due } = await q.schedule("c", { cron: "0 0 1 1 *", timezone: "UTC" }, "c");
  const next = Date.UTC(new Date(due).getUTCFullYear() + 1, 0, 1);
  const advance = (d, keep, succ) => script(q, "scheduleAdvance", q.keys.channel, "c", String(d), keep, succ);
  // The schedule waits at `due`: an answer for another due time changes nothing.
  assert.deepEqual(await advance(due - 1, String(due + 5), String(next)), [0, String(due)]);
  // Two clients answer for `due` at once (the one that took the previous occurrence, and one
  // that found it missing): one moves the pending occurrence (a catch-up "one"), the other's
  // answer is then for a due time the schedule has left.
  const [a, b] = await Promise.all([
    advance(due, String(due + 1000), String(next)),
    advance(due, String(due + 2000), String(next)),
  ]);
  assert.deepEqual([a[0], b[0]], [1, 0]);
  const [s] = await q.schedules();
  assert.equal(s.nextRun, due + 1000);
  assert.equal(await q.size(), 1, "one pending occurrence");
  assert.equal(await q.delayOf(`c@${due}`), undefined);
  assert.ok((await q.delayOf(`c@${due + 1000}`)) > 0);
  // An every schedule is Lua's own: no client answer applies.
  await q.schedule("e", { every: 60_000 }, "e");
  const [, e] = await q.schedules();
  assert.equal((await script(q, "scheduleAdvance", q.keys.channel, "e", String(e.nextRun), "1", "2"))[0], 0);
});

test("a client that took a cron occurrence and died before computing the next: the next consumer computes it and the chain goes on", async () => {
  const q = open();
  // overlap: true, as the dead client's delivery still holds its lease (overlap false would
  // skip the occurrences that come due meanwhile: it is in flight until the lease runs out).
  const { nextRun: first } = await q.schedule("c", { cron: "* * * * * *", timezone: "Asia/Kathmandu" }, "tick", {
    overlap: true,
  });
  await sleep(first - Date.now() + 20);
  // A take by a "client" that dies at once: it never answers what the script asks.
  const reply = await script(q, "take", q.keys.channel, 1, 5000, 5, 256, "00000000000000aa"); // the last: the run's random token part
  // The reply as js/redis/lua/take.lua's header lays it out: needs at 6, the items after the
  // expired leases.
  const [needs, items] = [reply[5], reply.slice(8 + 4 * reply[4])];
  assert.deepEqual([items[0], items[5]], [`c@${first}`, "c"]);
  assert.deepEqual(
    needs.map((n) => [n[0], Number(n[1])]),
    [["c", first + 1000]],
  );
  assert.equal((await q.schedules())[0].nextRun, first + 1000, "the next occurrence is pending");
  // The next consumer finds its successor unknown when it is due, asks itself, and goes on.
  const got = [];
  const w = q.process((_v, job) => {
    got.push([job.deadline - first, Date.now() - job.deadline, job.schedule]);
  });
  await sleep(first + 2300 - Date.now());
  await w.close();
  assert.deepEqual(
    got.map(([d, , s]) => [d, s]),
    [
      [1000, "c"],
      [2000, "c"],
    ],
  );
  for (const [, late] of got) assert.ok(late >= 0 && late < 1000, `${late} ms late`);
});

test("a schedule's value gets the offers' JSON check: what would come back changed is refused, naming it, and no schedule is made", async () => {
  const q = open();
  class Tags extends Array {}
  const named = Object.assign([1, 2], { note: "lost" });
  let reads = 0;
  const shifting = {
    get n() {
      return ++reads;
    },
  };
  for (const [value, words] of [
    [Tags.from(["a"]), /array of another class/],
    [named, /named property|property/],
    [shifting, /differ|changed|read/],
  ]) {
    await assert.rejects(
      q.schedule("s", { every: 1000 }, { value }),
      (e) => e instanceof TypeError && words.test(e.message),
    );
  }
  assert.deepEqual(await q.schedules(), []);
});
