#!/usr/bin/env node
// tarry-queue/redis against BullMQ's delayed jobs (issue 11): same Redis (a private
// redis-server, default settings), same run, every measurement in fresh processes
// (bench/redis/child.mjs), the two interleaved over rounds (their order rotating), medians.
//
//   npm run bench -- --redis              3 rounds (about 10 minutes on 2 cores)
//   node bench/redis/run.mjs --rounds R   options: --rounds R, --no-defaults (skips BullMQ's
//                                         recovery with its default 30 s locks, about a minute)
//
// Writes bench/redis/results.json (every sample) and bench/redis/results.md (the table).

import { execFileSync, fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { startRedis } from "../../tests/redis/redis-server.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const rounds = Number(flag("--rounds") ?? 3);
const withDefaults = !argv.includes("--no-defaults");
const IMPLS = ["tarry", "bullmq"];
const WORKERS = [1, 2, 4];
const CONCURRENCY = 8; // per worker process, both libraries
const N = 10_000;
const LEASE = 5000; // tarry's visibilityTimeout; BullMQ's lockDuration and stalledInterval in the fair recovery run

const log = (...a) => process.stderr.write(`[bench:redis] ${a.join(" ")}\n`);
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rotate = (xs, k) => xs.map((_, i) => xs[(i + k) % xs.length]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const redis = await startRedis();
let serial = 0;
const load = [];

/** A child process running one task; `result` resolves with what it sends back. */
function child(task, impl, extra = {}) {
  const cfg = { task, impl, port: redis.port, name: `b${++serial}`, ...extra };
  const c = fork(here("./child.mjs"), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const h = { c, count: 0 };
  h.ready = new Promise((r) => c.on("message", (m) => m.type === "ready" && r()));
  h.holding = new Promise((r) => c.on("message", (m) => m.type === "holding" && r()));
  c.on("message", (m) => m.type === "count" && (h.count = m.n));
  h.result = new Promise((resolve, reject) => {
    c.on("message", (m) => m.type === "result" && resolve(m.result));
    c.once("exit", (code, signal) => reject(new Error(`${task} ${impl} exited (${code ?? signal})`)));
  });
  h.result.catch(() => {});
  return h;
}

async function until(test, ms) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}

const results = { ping: { tarry: [], bullmq: [] }, adds: {}, delivery: {}, recovery: {} };
for (const t of ["add-serial", "add-concurrent", "add-bulk"]) results.adds[t] = { tarry: [], bullmq: [] };
for (const kind of ["spread", "burst"])
  for (const w of WORKERS) results.delivery[`${kind} ${w}`] = { tarry: [], bullmq: [] };
results.recovery = { tarry: [], bullmq: [], "bullmq-defaults": [] };

/** CPU time (ms) the Redis server used since the previous call (INFO's used_cpu_* count from its start). */
let cpuBase = 0;
async function serverCpu() {
  const info = await redis.cli("info", "cpu");
  const total =
    ["used_cpu_sys", "used_cpu_user"].reduce((s, k) => s + Number(info.match(new RegExp(`${k}:([\\d.]+)`))[1]), 0) *
    1000;
  const used = total - cpuBase;
  cpuBase = total;
  return used;
}

/** A delivery run: `workers` fresh worker processes, then a producer of N items. */
async function delivery(impl, kind, workers) {
  await redis.cli("flushall");
  const name = `d${++serial}`;
  const ws = Array.from({ length: workers }, () => child("worker", impl, { name, concurrency: CONCURRENCY }));
  await Promise.all(ws.map((w) => w.ready));
  await serverCpu();
  const shape = kind === "spread" ? { from: 1000, to: 5000 } : { at: 3000 };
  const producer = child("produce", impl, { name, n: N, ...shape });
  const { offeredIn } = await producer.result;
  const complete = await until(() => ws.reduce((n, w) => n + w.count, 0) >= N, 60_000);
  await sleep(300); // a second delivery of anything would show up here
  const redisCpu = await serverCpu();
  for (const w of ws) w.c.send("report");
  const reports = await Promise.all(ws.map((w) => w.result));
  const got = reports.map((r) => r.got);
  const workerCpu = reports.reduce((ms, r) => ms + r.cpuMs, 0);
  const lateness = [];
  const times = [];
  const seen = new Map();
  for (const g of got)
    for (let i = 0; i < g.length; i += 3) {
      times.push(g[i]);
      lateness.push(g[i + 1]);
      seen.set(g[i + 2], (seen.get(g[i + 2]) ?? 0) + 1);
    }
  lateness.sort((a, b) => a - b);
  const q = (p) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))];
  const sample = {
    offeredIn,
    delivered: seen.size,
    lost: N - seen.size,
    twice: [...seen.values()].filter((n) => n > 1).length,
    early: lateness.filter((x) => x < 0).length,
    p50: q(0.5),
    p99: q(0.99),
    max: lateness[lateness.length - 1],
    complete,
    // CPU per delivery (µs): the worker processes', and Redis' (it also ran the producer's adds).
    workerCpuUs: (workerCpu * 1000) / seen.size,
    redisCpuUs: (redisCpu * 1000) / seen.size,
  };
  if (kind === "burst") {
    // All N were due at one instant: deliveries/s from that instant to the last delivery.
    const due = Math.min(...times.map((t, i) => t - lateness[i]));
    sample.perSec = seen.size / ((Math.max(...times) - due) / 1000);
  }
  return sample;
}

/** kill -9 of a worker holding 20 items: ms until another worker has all 20. */
async function recovery(impl, bullmq) {
  await redis.cli("flushall");
  const name = `r${++serial}`;
  const holder = child("hold", impl, { name, n: 20, lease: LEASE, bullmq });
  await holder.ready;
  await child("produce", impl, { name, n: 20, from: 0, to: 1 }).result;
  await holder.holding;
  const rescuer = child("worker", impl, { name, concurrency: 20, bullmq });
  await rescuer.ready;
  await sleep(1000);
  const killed = performance.timeOrigin + performance.now();
  holder.c.kill("SIGKILL");
  const back = await until(() => rescuer.count >= 20, 120_000);
  rescuer.c.send("report");
  const { got } = await rescuer.result;
  const last = Math.max(...got.filter((_, i) => i % 3 === 0));
  return back ? last - killed : null;
}

const started = Date.now();
const uptime = () => os.loadavg()[0].toFixed(2);
for (let r = 0; r < rounds; r++) {
  log(`round ${r + 1}/${rounds} (load ${uptime()})`);
  load.push(os.loadavg()[0]);
  for (const task of Object.keys(results.adds)) {
    for (const impl of rotate(IMPLS, r)) {
      await redis.cli("flushall");
      const n = task === "add-serial" ? 5000 : N;
      const { perSec, pingPerSec } = await child(task, impl, { n }).result;
      results.adds[task][impl].push(perSec);
      if (pingPerSec) results.ping[impl].push(pingPerSec);
    }
  }
  for (const kind of ["spread", "burst"]) {
    for (const w of WORKERS) {
      for (const impl of rotate(IMPLS, r)) {
        const s = await delivery(impl, kind, w);
        results.delivery[`${kind} ${w}`][impl].push(s);
        log(`${kind} ${w} ${impl}: p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} max ${s.max.toFixed(1)} ms`);
      }
    }
  }
  for (const impl of rotate(IMPLS, r)) {
    const bullmq = impl === "bullmq" ? { lockDuration: LEASE, stalledInterval: LEASE } : undefined;
    results.recovery[impl].push(await recovery(impl, bullmq));
  }
  load.push(os.loadavg()[0]);
}
if (withDefaults) results.recovery["bullmq-defaults"].push(await recovery("bullmq", {}));
await redis.stop();

// --- the table ----------------------------------------------------------------------------

const fmt = (x) =>
  x == null
    ? "–"
    : x >= 1e6
      ? `${(x / 1e6).toPrecision(3)}M`
      : x >= 1e3
        ? `${(x / 1e3).toPrecision(3)}k`
        : x.toPrecision(3);
const ms = (x) => (x == null ? "–" : `${x.toFixed(x < 10 ? 2 : 1)} ms`);
const s = (x) => (x == null ? "not within 120 s" : `${(x / 1000).toFixed(2)} s`);
const ping = median(results.ping.tarry);
// Each add process also timed PINGs on its own connection, in alternating blocks: the ratio
// within a process is what the machine's noise disturbs least.
const perPing = median(results.ping.tarry.map((p, i) => p / results.adds["add-serial"].tarry[i]));
const lines = [];
const add = (l) => lines.push(l);
add("| workload | tarry-queue/redis | BullMQ 6.7 | tarry ÷ BullMQ |");
add("| --- | ---: | ---: | ---: |");
add(
  `| bare PING on the same connection, awaited one at a time (the floor of one awaited call), round trips/s | ${fmt(ping)} | ${fmt(median(results.ping.bullmq))} | |`,
);
const addNames = {
  "add-serial": "add, one awaited call at a time",
  "add-concurrent": `add, ${N} concurrent calls from one process`,
  "add-bulk": "add, bulk (offerMany / addBulk, 500 per call)",
};
const summary = { ping };
for (const [task, label] of Object.entries(addNames)) {
  const t = median(results.adds[task].tarry);
  const b = median(results.adds[task].bullmq);
  summary[task] = { tarry: t, bullmq: b };
  add(`| ${label}, adds/s | ${fmt(t)} | ${fmt(b)} | ×${(t / b).toFixed(2)} |`);
}
const stat = (samples, key) => median(samples.map((x) => x[key]));
for (const w of WORKERS) {
  const t = results.delivery[`burst ${w}`].tarry;
  const b = results.delivery[`burst ${w}`].bullmq;
  summary[`burst ${w}`] = { tarry: stat(t, "perSec"), bullmq: stat(b, "perSec") };
  add(
    `| deliveries/s, ${N} items due at one instant, ${w} worker process${w > 1 ? "es" : ""} × ${CONCURRENCY} | ${fmt(stat(t, "perSec"))} | ${fmt(stat(b, "perSec"))} | ×${(stat(t, "perSec") / stat(b, "perSec")).toFixed(2)} |`,
  );
}
for (const w of WORKERS) {
  const t = results.delivery[`spread ${w}`].tarry;
  const b = results.delivery[`spread ${w}`].bullmq;
  summary[`spread ${w}`] = { tarry: stat(t, "p99"), bullmq: stat(b, "p99") };
  add(
    `| lateness p50 / p99 / max, ${N} items due over 1–5 s, ${w} worker process${w > 1 ? "es" : ""} | ${ms(stat(t, "p50"))} / ${ms(stat(t, "p99"))} / ${ms(stat(t, "max"))} | ${ms(stat(b, "p50"))} / ${ms(stat(b, "p99"))} / ${ms(stat(b, "max"))} | |`,
  );
}
for (const w of WORKERS) {
  const t = results.delivery[`spread ${w}`].tarry;
  const b = results.delivery[`spread ${w}`].bullmq;
  const cpu = (xs) => `${stat(xs, "workerCpuUs").toFixed(0)} µs / ${stat(xs, "redisCpuUs").toFixed(0)} µs`;
  add(
    `| CPU per delivered item: worker processes / Redis (adds included), spread, ${w} worker${w > 1 ? "s" : ""} | ${cpu(t)} | ${cpu(b)} | |`,
  );
}
const runs = Object.values(results.delivery).flatMap((d) =>
  Object.entries(d).flatMap(([impl, xs]) => xs.map((x) => ({ impl, ...x }))),
);
for (const key of ["early", "lost", "twice"]) {
  const of = (impl) => runs.filter((x) => x.impl === impl).reduce((n, x) => n + x[key], 0);
  summary[key] = { tarry: of("tarry"), bullmq: of("bullmq") };
}
add(
  `| delivered early / lost / delivered twice, all delivery runs (${runs.length / 2} each) | ${summary.early.tarry} / ${summary.lost.tarry} / ${summary.twice.tarry} | ${summary.early.bullmq} / ${summary.lost.bullmq} / ${summary.twice.bullmq} | |`,
);
const rec = { tarry: median(results.recovery.tarry), bullmq: median(results.recovery.bullmq) };
summary.recovery = { ...rec, bullmqDefaults: results.recovery["bullmq-defaults"][0] };
add(
  `| kill -9 of a worker holding 20 items: all 20 with another worker after (lease ${LEASE / 1000} s: visibilityTimeout / lockDuration + stalledInterval) | ${s(rec.tarry)} | ${s(rec.bullmq)} | |`,
);
if (withDefaults)
  add(
    `| the same, BullMQ with its defaults (lockDuration 30 s, stalledInterval 30 s) | | ${s(summary.recovery.bullmqDefaults)} | |`,
  );

const p99s = WORKERS.map((w) => summary[`spread ${w}`].tarry);
const targets = [
  [
    "one awaited add ≥ 1.5× BullMQ's",
    summary["add-serial"].tarry / summary["add-serial"].bullmq >= 1.5,
    `×${(summary["add-serial"].tarry / summary["add-serial"].bullmq).toFixed(2)}`,
  ],
  [
    "one awaited add within 1.5× of the bare round trip",
    perPing <= 1.5,
    `a PING round trip is ×${perPing.toFixed(2)} as fast (median of the per-process ratios; ${fmt(summary["add-serial"].tarry)}/s vs ${fmt(ping)}/s)`,
  ],
  [
    "concurrent adds ≥ 2× BullMQ's",
    summary["add-concurrent"].tarry / summary["add-concurrent"].bullmq >= 2,
    `×${(summary["add-concurrent"].tarry / summary["add-concurrent"].bullmq).toFixed(2)}`,
  ],
  [
    "bulk adds ≥ 2× BullMQ's",
    summary["add-bulk"].tarry / summary["add-bulk"].bullmq >= 2,
    `×${(summary["add-bulk"].tarry / summary["add-bulk"].bullmq).toFixed(2)}`,
  ],
  [
    "lateness p99 ≤ 5 ms with 1, 2 and 4 workers (medians of runs)",
    p99s.every((x) => x <= 5),
    p99s.map((x) => ms(x)).join(", "),
  ],
  [
    "0 early, 0 lost, 0 completed twice",
    summary.early.tarry + summary.lost.tarry + summary.twice.tarry === 0,
    `${summary.early.tarry} / ${summary.lost.tarry} / ${summary.twice.tarry}`,
  ],
  [
    "in-flight items back within the visibility timeout + 1 s",
    rec.tarry != null && rec.tarry <= LEASE + 1000,
    s(rec.tarry),
  ],
];
const loads = `load average (1 min) ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} during the run`;
const md = [
  ...lines,
  "",
  `- Redis ${execFileSync("redis-server", ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)[1]} (a private redis-server, default settings, no persistence), Node ${process.version}, ${os.cpus()[0].model.trim()} × ${os.cpus().length}; ${loads}.`,
  `- Medians of ${rounds} interleaved rounds, each measurement in fresh processes; ioredis with auto-pipelining for both libraries; ${CONCURRENCY} concurrent handlers per worker process for both. Lateness = delivery time minus (time before the add call + delay), on each process's clock (one machine).`,
  `- ${Math.round((Date.now() - started) / 1000)} s in all.`,
  "",
  "Targets of issue 11:",
  "",
  ...targets.map(([what, met, got]) => `- ${met ? "met" : "**not met**"}: ${what}: ${got}`),
];
writeFileSync(
  here("./results.json"),
  `${JSON.stringify({ date: new Date().toISOString(), load, results, summary }, null, 1)}\n`,
);
writeFileSync(here("./results.md"), `${md.join("\n")}\n`);
// Kept in the repository, so formatted as the linter wants it.
execFileSync(
  here("../../node_modules/.bin/biome"),
  ["format", "--write", here("./results.json"), here("./results.md")],
  {
    stdio: "ignore",
  },
);
console.log(md.join("\n"));
