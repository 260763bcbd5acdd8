// The schedules part of the Redis benchmark (bench/redis/run.mjs runs it after the other
// rows, on the same private Redis, tarry and BullMQ 6.7's Job Schedulers interleaved):
//
// - lateness: one schedule every 100 ms and one per-second cron (Europe/Berlin), side by
//   side in one queue, consumed by 1 and by 4 worker processes (8 handlers each) for
//   `seconds` (default 60): each occurrence's lateness (its handler's start minus its due
//   time), and how many occurrences of the window were missed, handed out twice, or early;
// - 10^5 schedules in one queue (every minute, their phases spread over the minute): Redis
//   memory per schedule (used_memory before and after, nothing due yet), how fast they are
//   created (64 calls at a time), then, once they fire (about 1,700 occurrences a second),
//   the CPU one occurrence costs Redis and the worker process over a 20 s window.
//
// Each measurement in fresh processes (bench/redis/schedule-child.mjs).

const EVERY_MS = 100;
const CRON = "* * * * * *";
const ZONE = "Europe/Berlin";
const FLEET = 100_000;
const FLEET_PERIOD = 60_000;
const FLEET_WINDOW = 20_000;
const CONCURRENCY = 8;

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * What a run delivered of one schedule, within [from, to): occurrences, lateness quantiles,
 * missed (periods without an occurrence between the first and the last), doubled (a due time
 * handed out twice), early (a handler that started before its due time).
 * @param {number[]} dues
 * @param {number[]} lateness
 * @param {number} period
 */
function analyse(dues, lateness, period) {
  const count = new Map();
  for (const d of dues) count.set(d, (count.get(d) ?? 0) + 1);
  const once = [...count.keys()].sort((a, b) => a - b);
  let missed = 0;
  for (let i = 1; i < once.length; i++) missed += Math.max(0, Math.round((once[i] - once[i - 1]) / period) - 1);
  const late = [...lateness].sort((a, b) => a - b);
  const q = (p) => late[Math.min(late.length - 1, Math.floor(p * late.length))];
  return {
    occurrences: once.length,
    missed,
    doubled: [...count.values()].filter((n) => n > 1).length,
    early: late.filter((x) => x < 0).length,
    p50: q(0.5),
    p99: q(0.99),
    max: late[late.length - 1],
  };
}

/** The deliveries of worker reports ([schedule, due, lateness] flat), by schedule, due within [from, to). */
function bySchedule(reports, from, to) {
  const out = new Map();
  for (const { got } of reports) {
    for (let i = 0; i < got.length; i += 3) {
      const [schedule, due, late] = [got[i], got[i + 1], got[i + 2]];
      if (due < from || due >= to) continue;
      if (!out.has(schedule)) out.set(schedule, { dues: [], lateness: [] });
      out.get(schedule).dues.push(due);
      out.get(schedule).lateness.push(late);
    }
  }
  return out;
}

/**
 * @param {{ redis: { cli: (...a: string[]) => Promise<string> }, spawn: (task: string, impl: string, extra?: object) => any, serverCpu: () => Promise<number>, log: (...a: unknown[]) => void, impls: string[], seconds: number, rotate: (xs: string[], k: number) => string[] }} ctx
 */
export async function runSchedules({ redis, spawn, serverCpu, log, impls, seconds, rotate }) {
  const results = { lateness: {}, fleet: {} };
  for (const w of [1, 4]) results.lateness[w] = Object.fromEntries(impls.map((i) => [i, []]));
  for (const i of impls) results.fleet[i] = [];
  let serial = 0;

  /** Occurrence lateness: an every and a cron schedule for `seconds`, `workers` worker processes. */
  const lateness = async (impl, workers) => {
    await redis.cli("flushall");
    const name = `s${++serial}`;
    const ws = Array.from({ length: workers }, () => spawn("worker", impl, { name, concurrency: CONCURRENCY }));
    await Promise.all(ws.map((w) => w.ready));
    const start = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    const specs = [
      { id: "every", every: EVERY_MS, start },
      { id: "cron", cron: CRON, timezone: ZONE },
    ];
    await spawn("schedule", impl, { name, specs }).result;
    await sleep(start - Date.now());
    for (const w of ws) w.c.send("mark");
    await sleep(seconds * 1000);
    const end = Date.now();
    for (const w of ws) w.c.send("report");
    const reports = await Promise.all(ws.map((w) => w.result));
    const got = bySchedule(reports, start, end - 1000);
    const of = (id, period) => analyse(got.get(id)?.dues ?? [], got.get(id)?.lateness ?? [], period);
    return { every: of("every", EVERY_MS), cron: of("cron", 1000), seconds };
  };

  /** 10^5 schedules: memory per schedule, the rate they are created at, and the CPU of one occurrence once they fire. */
  const fleet = async (impl) => {
    await redis.cli("flushall");
    const name = `f${++serial}`;
    const used = async () => Number((await redis.cli("info", "memory")).match(/used_memory:(\d+)/)[1]);
    // A pilot (in another queue, flushed after) for how long creating them takes, so that they
    // start firing once all are created.
    const far = { n: 2000, every: FLEET_PERIOD, first: Date.now() + 3_600_000, spread: FLEET_PERIOD };
    const pilot = await spawn("schedule", impl, { name: `${name}-pilot`, fleet: far, concurrency: 64 }).result;
    await redis.cli("flushall");
    const before = await used();
    const firstAt = Date.now() + (FLEET / pilot.perSec) * 1500 + 10_000;
    const fleet = { n: FLEET, every: FLEET_PERIOD, first: firstAt, spread: FLEET_PERIOD };
    const { perSec } = await spawn("schedule", impl, { name, fleet, concurrency: 64 }).result;
    const after = await used();
    const bytes = (after - before) / FLEET;
    log(`fleet ${impl}: ${FLEET} schedules created at ${perSec.toFixed(0)}/s, ${bytes.toFixed(0)} B each`);
    if (Date.now() > firstAt) log(`fleet ${impl}: creating them took longer than planned; the window starts late`);
    const w = spawn("worker", impl, { name, concurrency: CONCURRENCY });
    await w.ready;
    await sleep(firstAt + 5000 - Date.now());
    const from = Date.now();
    w.c.send("mark");
    await serverCpu();
    await sleep(FLEET_WINDOW);
    const redisCpu = await serverCpu();
    w.c.send("report");
    const { got, cpuMs } = await w.result;
    const to = Date.now();
    const n = got.length / 3;
    const late = [];
    for (let i = 2; i < got.length; i += 3) late.push(got[i]);
    const a = analyse([], late, 1);
    const dues = new Set();
    let doubled = 0;
    for (let i = 0; i < got.length; i += 3) {
      const k = `${got[i]}@${got[i + 1]}`;
      if (dues.has(k)) doubled++;
      dues.add(k);
    }
    await redis.cli("flushall");
    return {
      bytes,
      perSec,
      occurrences: n,
      perSecond: n / ((to - from) / 1000),
      redisCpuUs: (redisCpu * 1000) / n,
      workerCpuUs: (cpuMs * 1000) / n,
      p50: a.p50,
      p99: a.p99,
      early: a.early,
      doubled,
    };
  };

  for (const [k, w] of [1, 4].entries()) {
    for (const impl of rotate(impls, k)) {
      const s = await lateness(impl, w);
      results.lateness[w][impl].push(s);
      log(
        `schedules ${w} ${impl}: every ${s.every.p50}/${s.every.p99} ms (${s.every.occurrences}, missed ${s.every.missed}), cron ${s.cron.p50}/${s.cron.p99} ms (${s.cron.occurrences}, missed ${s.cron.missed})`,
      );
    }
  }
  for (const impl of impls) results.fleet[impl].push(await fleet(impl));
  return results;
}
