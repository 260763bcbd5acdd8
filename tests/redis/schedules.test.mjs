// Schedules on Redis, in one process against a private redis-server: overlap (skipped runs,
// the catch-up that waits for the run before it, and runs that last through their retries),
// arguments no loop may depend on, every in Lua against every in JS, the chain with no client
// running, the cron successor computed by a client (across daylight-saving changes, through
// the real take and advance scripts), its compare-and-set (on the due time and the rule's
// version), and a client that took a cron occurrence and died before computing the next one. The contract's cases (tests/contract) cover the rest; the
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
import { luaDir, sourceOf } from "../../scripts/lua.mjs";
import { EARLIEST_INSTANT, LATEST_INSTANT } from "../../js/engine/arguments.js";
import { catchUp, EveryRule } from "../../js/schedule/rule.js";
import { occurrenceId } from "../../js/schedule/spec.js";
import { rng } from "../../bench/rng.mjs";

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

test("overlap false covers retries: while an occurrence waits for its retry and runs it, the next ones are skipped and counted; two runs never at once", async () => {
  const q = open();
  const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s");
  const runs = [];
  let active = 0;
  let most = 0;
  const worker = q.process(
    async (_v, job) => {
      runs.push([(job.deadline - t0) / 100, job.attempt]);
      most = Math.max(most, ++active);
      try {
        if (job.deadline === t0 && job.attempt === 1) throw new Error("the first run fails once");
        if (job.deadline === t0) await sleep(300); // its retry takes three periods
      } finally {
        active--;
      }
    },
    { concurrency: 3, retryDelayMs: 350 },
  );
  await sleep(t0 - Date.now() + 1400);
  await worker.close();
  const [s] = await q.schedules();
  assert.equal(most, 1, `two runs of the schedule at once: ${JSON.stringify(runs)}`);
  assert.deepEqual(runs.slice(0, 2), [
    [0, 1],
    [0, 2],
  ]);
  // Occurrences 1 .. 6 came due while occurrence 0 lasted (its retry at ~350 ms, running to ~650).
  assert.ok(runs[2][0] >= 6, `the first run after the retry: ${JSON.stringify(runs)}`);
  assert.ok(s.skipped >= 5, `skipped ${s.skipped}`);
  const last = runs.at(-1)[0];
  assert.equal(s.runs + s.skipped, last + 1, `runs ${s.runs}, skipped ${s.skipped}: ${JSON.stringify(runs)}`);
});

test("overlap false covers a lease that ran out: the occurrence's redelivery is its run going on, and the occurrences due meanwhile are skipped", async () => {
  const q = open();
  const { nextRun: t0 } = await q.schedule("s", { every: 200 }, "s");
  await sleep(t0 - Date.now() + 20);
  // A consumer takes occurrence 0 with a 300 ms lease and dies.
  const reply = await script(q, "take", q.keys.channel, 1, 300, 5, 256, "00000000000000ab");
  assert.equal(reply.slice(8 + 4 * reply[4])[0], `s@${t0}`);
  const w = run(
    q,
    (r) => (r.due === t0 ? sleep(500) : undefined), // its redelivery runs long
    3,
  );
  await sleep(t0 - Date.now() + 1800);
  await w.close();
  const runs = w.runs.map((r) => [(r.due - t0) / 200, r.attempt]);
  assert.equal(w.most(), 1, JSON.stringify(runs));
  assert.deepEqual(runs[0], [0, 2], `the redelivery comes first: ${JSON.stringify(runs)}`);
  // 1 came due while 0 was leased by the dead consumer, 2 and 3 while its redelivery ran.
  assert.ok(runs[1][0] >= 4, JSON.stringify(runs));
  assert.ok(w.runs[1].start >= w.runs[0].end, "an occurrence ran beside the redelivery");
  const [s] = await q.schedules();
  assert.ok(s.skipped >= 3, `skipped ${s.skipped}`);
});

test("a retry waits while another run of its schedule is leased (overlap false): an occurrence brought back from the dead letters", async () => {
  const q = open();
  const { nextRun: t0 } = await q.schedule("s", { every: 100 }, "s");
  // Occurrence 0 dies on its only attempt; occurrence 2 then runs long, and 0 is retried from
  // the dead letters while it runs.
  let active = 0;
  let most = 0;
  const runs = [];
  let revived = false;
  const worker = q.process(
    async (_v, job) => {
      runs.push([(job.deadline - t0) / 100, job.attempt, Date.now()]);
      most = Math.max(most, ++active);
      try {
        if (job.deadline === t0 && !revived) throw new Error("dies");
        if (!revived) {
          revived = true;
          await q.retryDead(`s@${t0}`);
          await sleep(400);
        }
      } finally {
        active--;
      }
    },
    { concurrency: 3, retryDelayMs: 0 },
  );
  await sleep(t0 - Date.now() + 1500);
  await worker.close();
  assert.equal(most, 1, `two runs of the schedule at once: ${JSON.stringify(runs)}`);
  assert.ok(
    runs.some(([d, a]) => d === 0 && a > 1),
    `occurrence 0 ran again after its retry: ${JSON.stringify(runs)}`,
  );
});

test("no loop depends on an argument: a start of -1e17 is refused at the call, and a record holding one (written before the check) costs the upsert script nothing", async () => {
  const q = open();
  await assert.rejects(q.schedule("d", { every: 10 }, 1, { start: -1e17 }), {
    name: "RangeError",
    message: /^start\b/,
  });
  for (const [rule, start] of [
    [{ every: 10 }, 9e15],
    [{ every: 8.64e15 }, undefined],
    [{ cron: "* * * * *" }, 9e15],
    [{ every: 1000 }, Date.UTC(2300, 0, 1)],
  ]) {
    await assert.rejects(
      q.schedule("d", rule, 1, { start }),
      { name: "RangeError", message: start === undefined ? /^rule\.every\b/ : /^start\b/ },
      JSON.stringify([rule, start]),
    );
  }
  assert.deepEqual(await q.schedules(), []);
  // The upsert script as an older client sent it, with no range check: it must finish at once,
  // and Redis keep answering other clients.
  const other = new Redis(server.url, { commandTimeout: 1000, maxRetriesPerRequest: 0 });
  try {
    const upsert = script(
      q,
      "scheduleUpsert",
      q.keys.channel,
      "d",
      "e",
      "10",
      "-100000000000000000",
      "",
      "one",
      "0",
      "1",
      "",
      "",
    );
    const ping = sleep(50).then(() => other.ping());
    const [reply, pong] = await Promise.allSettled([upsert, ping]);
    if (pong.status !== "fulfilled") await other.call("SCRIPT", "KILL").catch(() => {});
    assert.equal(pong.status, "fulfilled", `Redis did not answer PING within a second: ${pong.reason}`);
    assert.equal(reply.status, "fulfilled", String(reply.reason));
    const [s] = await q.schedules();
    // Beyond 2^53 the arithmetic is not exact, but it ends, near now.
    assert.ok(s.nextRun > Date.now() - 1000 && s.nextRun <= Date.now() + 1010, `nextRun ${s.nextRun}`);
  } finally {
    other.disconnect();
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
  const version = await versionOf(q, "c");
  const advance = (d, keep, succ) => script(q, "scheduleAdvance", q.keys.channel, "c", String(d), keep, succ, version);
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
  const ev = await versionOf(q, "e");
  assert.equal((await script(q, "scheduleAdvance", q.keys.channel, "e", String(e.nextRun), "1", "2", ev))[0], 0);
});

test("a successor computed under a rule that schedule() has replaced since is refused, even for the same due time", async () => {
  const q = open();
  // The old rule runs every second; the new one at second 10 of each minute. Both have the
  // occurrence at `due` (a second 10), so the due time alone cannot tell the answers apart.
  const due = Math.ceil((Date.now() + 120_000) / 60_000) * 60_000 + 10_000;
  await q.schedule("c", { cron: "* * * * * *" }, "c", { start: due });
  const stale = await versionOf(q, "c");
  // A consumer computes the old rule's successor of `due` (second 11) ...
  const rule = cron("* * * * * *");
  const succ = rule.next(due);
  assert.equal(succ, due + 1000);
  // ... while schedule() replaces the rule; its chain starts again at the same instant.
  const info = await q.schedule("c", { cron: "10 * * * * *" }, "c", { start: due });
  assert.equal(info.nextRun, due, "the new rule's first occurrence is the old one's due time");
  assert.notEqual(await versionOf(q, "c"), stale, "a new rule, a new version");
  // The stale answer arrives: refused, and the new rule's successor (a minute on) stays.
  const reply = await script(q, "scheduleAdvance", q.keys.channel, "c", String(due), String(due), String(succ), stale);
  assert.equal(reply[0], 0, "the answer computed under the old rule is refused");
  assert.equal(fieldsOf(await raw.hget(q.keys.schedules, "c"))[7], String(due + 60_000), "succ: the new rule's");
  // The same rule again (a new value only) keeps the version: an answer in flight still lands.
  const current = await versionOf(q, "c");
  await q.schedule("c", { cron: "10 * * * * *" }, "c2", { start: due });
  assert.equal(await versionOf(q, "c"), current);
});

/** A schedule's record (includes/schedule.lua), split at its fields (the value last, whole). */
function fieldsOf(record) {
  const parts = record.split("|");
  return [...parts.slice(0, 15), parts.slice(15).join("|")];
}

/** The version of schedule `id`'s rule, as its record holds it. */
async function versionOf(q, id) {
  const version = fieldsOf(await raw.hget(q.keys.schedules, id))[13];
  assert.match(version, /^v\d+$/);
  return version.slice(1);
}

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

test("every and catchUp in Lua (includes/every.lua) and in JS (rule.js) agree on 4,000 random cases, near the instant range's ends too; occurrence ids alike", async () => {
  // A script of the Lua functions alone, as the take and upsert scripts have them.
  const source = sourceOf(
    "crosscheck.lua",
    luaDir,
    `--- @include "every"
local out = {}
local function text(t) if t == nil then return '' end return string.format('%.0f', t) end
for i = 1, #ARGV, 5 do
  local first, period, catch, due, now = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2], tonumber(ARGV[i + 3]),
    tonumber(ARGV[i + 4])
  local run, after = every_catch_up(first, period, catch, due, now)
  out[#out + 1] = text(every_next(first, period, due))
  out[#out + 1] = text(every_latest(first, period, now))
  out[#out + 1] = text(run)
  out[#out + 1] = text(after)
  out[#out + 1] = occurrence_id(ARGV[i + 2] .. i, text(due))
end
return out
`,
  );
  const rnd = rng(Number(process.env.EVERY_SEED ?? 28));
  const text = (t) => (t === undefined ? "" : String(t));
  const pick = (n) => Math.floor(rnd() * n);
  let compared = 0;
  for (let batch = 0; batch < 8; batch++) {
    const cases = [];
    for (let i = 0; i < 500; i++) {
      const period = 1 + (rnd() < 0.5 ? pick(1000) : pick(rnd() < 0.5 ? 1e9 : 1e13));
      const edge = rnd();
      const first =
        edge < 0.2
          ? EARLIEST_INSTANT + pick(1e6)
          : edge < 0.4
            ? LATEST_INSTANT - pick(1e6) - period * pick(30)
            : Date.UTC(2026, 0, 1) + pick(1e12) - 5e11;
      const most = Math.floor((LATEST_INSTANT - first) / period); // occurrences k up to it are instants
      const due = first + period * pick(Math.min(most, rnd() < 0.5 ? 20 : most) + 1);
      const now = due + (rnd() < 0.3 ? pick(period) : pick(period * 40));
      const mode = ["one", "all", "none"][pick(3)];
      cases.push([first, period, mode, due, now]);
    }
    const got = await raw.eval(source, 0, ...cases.flat().map(String));
    cases.forEach(([first, period, mode, due, now], i) => {
      const rule = new EveryRule(period, first);
      const { run, next } = catchUp(rule, due, now, mode);
      const js = [rule.next(due), rule.latest(now), run, next].map(text);
      js.push(occurrenceId(`${mode}${5 * i + 1}`, due));
      assert.deepEqual(
        got.slice(5 * i, 5 * i + 5),
        js,
        `every ${period} from ${first}, due ${due}, now ${now}, ${mode}`,
      );
      compared++;
    });
  }
  assert.equal(compared, 4000);
});

test("a schedule record written before maxRuns, stopAt and pause reads as none and not paused, and takes them", async () => {
  const q = open();
  const made = await q.schedule("legacy", { every: 60000 }, { kind: "old" });
  const due = /** @type {number} */ (made.nextRun);
  // Back to the form the previous version wrote: ... 'v' version '|' running '|' value.
  const record = await raw.hget(q.keys.schedules, "legacy");
  const legacy = record.replace(/\|l\|\|0\|\{/, "|{");
  assert.notEqual(legacy, record, "the record had the limits' fields");
  await raw.hset(q.keys.schedules, "legacy", legacy);
  let [s] = await q.schedules();
  assert.deepEqual(
    [s.id, s.every, s.nextRun, s.value, s.maxRuns, s.stopAt, s.paused],
    ["legacy", 60000, due, { kind: "old" }, undefined, undefined, false],
  );
  assert.deepEqual(await q.nextRuns("legacy", 2), [due, due + 60000]);
  assert.equal(await q.pauseSchedule("legacy"), true);
  assert.equal(await q.size(), 0, "paused: its occurrence taken away");
  [s] = await q.schedules();
  assert.deepEqual([s.paused, s.nextRun, s.value], [true, due, { kind: "old" }]);
  assert.equal(await q.resumeSchedule("legacy"), true);
  assert.equal(await q.size(), 1);
  const info = await q.schedule("legacy", { every: 60000 }, { kind: "new" }, { maxRuns: 1 });
  assert.deepEqual([info.nextRun, info.maxRuns], [due, 1], "the same rule: the chain goes on, with the limit");
  assert.equal(await q.trigger("legacy"), true);
  [s] = await q.schedules();
  assert.deepEqual([s.runs, s.nextRun], [1, undefined], "its one run, triggered, ended it");
  assert.equal(await q.size(), 1, "the triggered run is the one item left");
});
