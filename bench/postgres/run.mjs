#!/usr/bin/env node
// tarry-queue/postgres against pg-boss 12 and graphile-worker 0.18: the same private Postgres 15
// (tools/postgres-server.mjs, the server's defaults, fsync on), the same run, every measurement
// in fresh processes (bench/postgres/child.mjs) on a fresh database, the three interleaved over
// rounds (their order rotating), medians. Under Node >= 22 (the peers need it): bench.sh runs it
// with the node24 devDependency, and the children with the same Node.
//
//   npm run bench -- --postgres               3 rounds, then a 10-minute churn run per library
//   node bench/postgres/run.mjs --rounds R    options: --rounds R, --churn-minutes M (default 10;
//                                             0.1 in the smoke run), --churn-rate N (items/s, 100)
//   node bench/postgres/run.mjs --smoke       tiny N, every library and workload once; fails if
//                                             any item came early, was lost or came twice, or
//                                             tarry's came out of order (npm test runs this);
//                                             --impls pgboss,graphile: only those
//   node bench/postgres/run.mjs --only add-serial,spread
//                                             only those workloads (of add-serial, add-concurrent,
//                                             add-bulk, burst, spread, recovery, churn), with
//                                             --rounds and --impls as given: for measuring a
//                                             change; prints the medians, writes neither file
//   node bench/postgres/run.mjs --render      bench/postgres/results.md again from results.json
//
// Workloads: adds/s (one awaited at a time, 10^4 concurrent, bulk 10^4 in calls of 500);
// deliveries/s of 10^4 items due at one instant with 1, 2 and 4 worker processes (8 handlers
// each) and the first delivery's lateness; lateness of 2,000 items due over 3 s (the defaults,
// and the finest polling each peer allows); recovery after `kill -9` of a worker holding 8
// items; Postgres CPU (every server process: /proc) and WAL bytes (pg_current_wal_lsn) per item
// added, delivered and completed; dead tuples and table size over a churn run (autovacuum at its
// defaults). Writes bench/postgres/results.json (every sample, the settings and the machine) and
// bench/postgres/results.md (bench/postgres/report.mjs); the smoke run writes neither.

import { execFileSync, fork } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startPostgres } from "../../tools/postgres-server.mjs";
import { option, rotate, writeResults } from "../cli.mjs";
import { IMPLS as ALL } from "./impls.mjs";
import { render } from "./report.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name, fallback) => option(argv, name, fallback);
const smoke = argv.includes("--smoke");
const log = (...a) => process.stderr.write(`[bench:postgres] ${a.join(" ")}\n`);

if (argv.includes("--render")) {
  const { meta, results } = JSON.parse(readFileSync(here("./results.json"), "utf8"));
  writePage(meta, results);
  process.exit(0);
}

// --impls tarry,pgboss: some of the libraries only (for measuring a change; the page wants all three).
const IMPLS = flag("--impls", ALL.join(",")).split(",");
for (const i of IMPLS) if (!ALL.includes(i)) throw new Error(`--impls: of ${ALL.join(", ")}; got ${i}`);
const WORKLOADS = ["add-serial", "add-concurrent", "add-bulk", "burst", "spread", "recovery", "churn"];
const only = flag("--only", undefined)?.split(",");
for (const w of only ?? []) if (!WORKLOADS.includes(w)) throw new Error(`--only: of ${WORKLOADS.join(", ")}; got ${w}`);
const runs = (workload) => only === undefined || only.includes(workload);
const rounds = smoke ? 1 : Number(flag("--rounds", 3));
const churnMinutes = Number(flag("--churn-minutes", smoke ? 0.1 : 10));
const churnRate = Number(flag("--churn-rate", 100));
for (const [name, v] of [
  ["--rounds", rounds],
  ["--churn-minutes", churnMinutes],
  ["--churn-rate", churnRate],
])
  if (!(v > 0)) throw new Error(`${name}: a positive number, got ${v}`);
const N = smoke ? 200 : 10_000; // items per add run and per burst
const SERIAL = smoke ? 50 : 2000; // adds awaited one at a time
const WORKERS = smoke ? [1, 2] : [1, 2, 4];
const CONCURRENCY = 8; // handlers per worker process, every library
const SPREAD = smoke ? { n: 100, ms: 1000 } : { n: 2000, ms: 3000 };
const LEAD = smoke ? 1500 : 4000; // ms from a burst's production to its instant, and to the spread's start
const HELD = 8; // items a killed worker holds
const LEASE = smoke ? 2000 : 5000; // tarry's visibilityTimeout; pg-boss's expireInSeconds
const RECOVERY_CAP = smoke ? 5000 : 30_000; // ms a recovery is waited for
const CHURN_SAMPLE = smoke ? 1000 : 10_000; // ms between samples of the churn run

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** bench/postgres/results.md from a run, formatted as the linter wants it (it is kept in the repository). */
function writePage(meta, results) {
  const page = render({ meta, results });
  writeResults(here("./results.md"), here("./results.json"), page, log);
  console.log(page);
}

const pg = await startPostgres();
const dataDir = join(pg.dir, "data");
let serial = 0;

/** A fresh database for one measurement: its own tables, statistics and autovacuum. */
async function database() {
  const db = `b${++serial}`;
  await pg.query(`CREATE DATABASE ${db}`);
  return { db, url: pg.url.replace(/\/postgres$/, `/${db}`) };
}

const running = new Set(); // child processes not yet exited

/** A child process running one task; `result` resolves with what it sends back. */
function child(task, impl, url, extra = {}) {
  const cfg = { task, impl, url, name: "bench", ...extra };
  const c = fork(here("./child.mjs"), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const h = { c, count: 0 };
  running.add(c);
  c.once("exit", () => running.delete(c));
  h.ready = new Promise((r) => c.on("message", (m) => m.type === "ready" && r()));
  h.holding = new Promise((r) => c.on("message", (m) => m.type === "holding" && r()));
  c.on("message", (m) => m.type === "count" && (h.count = m.n));
  h.result = new Promise((resolve, reject) => {
    c.on("message", (m) => m.type === "result" && resolve(m.result));
    let reason = "";
    c.on("message", (m) => m.type === "error" && (reason = `: ${m.message}`));
    c.once("exit", (code, signal) => reject(new Error(`${task} ${impl} exited (${code ?? signal})${reason}`)));
  });
  h.result.catch(() => {});
  return h;
}

async function until(test, ms) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}

/** CPU ms of every process of the server so far: the postmaster, its live children, and those it reaped. */
function serverCpuMs() {
  const tick = 100; // USER_HZ on Linux
  const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const fields = (p) => readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
  const [utime, stime, cutime, cstime] = fields(pid).slice(11, 15).map(Number);
  let total = utime + stime + cutime + cstime;
  for (const p of execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)) {
    try {
      const [u, s] = fields(p).slice(11, 13).map(Number);
      total += u + s;
    } catch {} // it exited meanwhile: its time is in the postmaster's cutime now
  }
  return (total * 1000) / tick;
}
const walLsn = () => pg.query("SELECT pg_current_wal_lsn()");
const walSince = async (lsn) => Number(await pg.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${lsn}')`));

/** What the workers' deliveries say: each item once, none early, in due order per worker. */
function check(results, n) {
  const seen = new Uint8Array(n);
  let dup = 0;
  let early = 0;
  let outOfOrder = 0;
  const times = [];
  const late = [];
  for (const { got } of results) {
    let lastDue = -Infinity;
    for (let i = 0; i < got.length; i += 3) {
      const [t, lateness, k] = [got[i], got[i + 1], got[i + 2]];
      if (seen[k]) dup++;
      seen[k] = 1;
      if (lateness < 0) early++;
      const due = t - lateness;
      if (due < lastDue) outOfOrder++;
      lastDue = Math.max(lastDue, due);
      times.push(t);
      late.push(lateness);
    }
  }
  const lost = n - seen.reduce((a, b) => a + b, 0);
  times.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  return { dup, early, lost, outOfOrder, times, late };
}

/** N items due at one instant, `workers` worker processes: deliveries/s, the first one's lateness; with 1 worker, the server's cost. */
async function burst(impl, workers) {
  const { url } = await database();
  const ws = Array.from({ length: workers }, () => child("worker", impl, url, { concurrency: CONCURRENCY }));
  await Promise.all(ws.map((w) => w.ready));
  const [lsn, cpu] = [await walLsn(), serverCpuMs()];
  const at = Date.now() + LEAD;
  const { offeredIn } = await child("produce", impl, url, { n: N, at }).result;
  const all = await until(() => ws.reduce((a, w) => a + w.count, 0) >= N, 60_000 + N * 10);
  for (const w of ws) w.c.send("report");
  const results = await Promise.all(ws.map((w) => w.result));
  await sleep(500); // the workers' backends exit; the postmaster reaps them
  const c = check(results, N);
  const out = {
    perSec: c.times.length > 1 ? (c.times.length - 1) / ((c.times.at(-1) - c.times[0]) / 1000) : null,
    firstLateMs: c.times.length ? c.times[0] - at : null,
    offeredIn,
    early: c.early,
    lost: c.lost,
    dup: c.dup,
    outOfOrder: c.outOfOrder,
    complete: all,
    workerCpuMs: results.reduce((a, r) => a + r.cpuMs, 0),
  };
  if (workers === 1) {
    out.walBytesPerItem = (await walSince(lsn)) / N;
    out.serverCpuUsPerItem = ((serverCpuMs() - cpu) * 1000) / N;
  }
  return out;
}

/** SPREAD.n items due over SPREAD.ms, one worker process: lateness percentiles. */
async function spread(impl, polling) {
  const { url } = await database();
  const w = child("worker", impl, url, { concurrency: CONCURRENCY, polling });
  await w.ready;
  await child("produce", impl, url, { n: SPREAD.n, from: LEAD, to: LEAD + SPREAD.ms }).result;
  const all = await until(() => w.count >= SPREAD.n, 60_000);
  w.c.send("report");
  const c = check([await w.result], SPREAD.n);
  return {
    p50: pct(c.late, 50) ?? null,
    p99: pct(c.late, 99) ?? null,
    max: c.late.at(-1) ?? null,
    early: c.early,
    lost: c.lost,
    dup: c.dup,
    outOfOrder: c.outOfOrder,
    complete: all,
  };
}

/** A worker holding HELD items is killed with SIGKILL: ms until another worker has had them all. */
async function recovery(impl) {
  const { url } = await database();
  await child("produce", impl, url, { n: HELD, at: Date.now(), lease: LEASE }).result;
  const holder = child("hold", impl, url, { n: HELD, lease: LEASE });
  await holder.ready;
  const ok = await Promise.race([holder.holding.then(() => true), sleep(30_000).then(() => false)]);
  if (!ok) throw new Error(`recovery ${impl}: the holding worker did not take ${HELD} items within 30 s`);
  const w = child("worker", impl, url, { concurrency: CONCURRENCY, lease: LEASE });
  await w.ready;
  const killed = Date.now();
  holder.c.kill("SIGKILL");
  const all = await until(() => w.count >= HELD, RECOVERY_CAP);
  const ms = all ? Date.now() - killed : null;
  w.c.send("report");
  const c = check([await w.result], HELD);
  return { ms, cap: RECOVERY_CAP, redelivered: HELD - c.lost, dup: c.dup };
}

/** The table statistics of one database: dead and live tuples, bytes (tables with their indexes and TOAST), autovacuum runs. */
async function tableStats(db) {
  const sql =
    "SELECT coalesce(sum(n_dead_tup),0), coalesce(sum(n_live_tup),0), coalesce(sum(pg_total_relation_size(relid)),0), coalesce(sum(autovacuum_count),0) FROM pg_stat_user_tables";
  const out = execFileSync(
    "psql",
    ["-X", "-A", "-t", "-F", " ", "-h", "127.0.0.1", "-p", String(pg.port), "-U", "postgres", "-d", db, "-c", sql],
    {
      encoding: "utf8",
    },
  );
  const [dead, live, bytes, autovacuums] = out.trim().split(" ").map(Number);
  return { dead, live, bytes, autovacuums };
}

/** churnRate items/s, each due 1 s after its add, for churnMinutes, one worker: the tables sampled as it runs. */
async function churn(impl) {
  const { db, url } = await database();
  const w = child("worker", impl, url, { concurrency: CONCURRENCY });
  await w.ready;
  const start = Date.now();
  const samples = [];
  const producer = child("stream", impl, url, { rate: churnRate, delay: 1000, seconds: churnMinutes * 60 });
  let streaming = true;
  const { offered } = await Promise.race([
    producer.result.finally(() => (streaming = false)),
    (async () => {
      while (streaming) {
        await sleep(CHURN_SAMPLE);
        samples.push({ s: (Date.now() - start) / 1000, delivered: w.count, ...(await tableStats(db)) });
      }
      return new Promise(() => {});
    })(),
  ]);
  const all = await until(() => w.count >= offered, 60_000);
  await sleep(CHURN_SAMPLE);
  samples.push({ s: (Date.now() - start) / 1000, delivered: w.count, ...(await tableStats(db)) });
  w.c.send("report");
  const c = check([await w.result], offered);
  const last = samples.at(-1);
  return {
    minutes: churnMinutes,
    rate: churnRate,
    offered,
    lost: c.lost,
    dup: c.dup,
    early: c.early,
    complete: all,
    maxDead: Math.max(...samples.map((s) => s.dead)),
    finalDead: last.dead,
    maxBytes: Math.max(...samples.map((s) => s.bytes)),
    finalBytes: last.bytes,
    autovacuums: last.autovacuums,
    samples,
  };
}

const failures = [];
/** One measurement; if it fails, the failure is logged and kept (results.failures), and the run goes on. */
async function measured(what, body) {
  try {
    return await body();
  } catch (e) {
    log(`${what} FAILED: ${e.message}`);
    failures.push(`${what}: ${e.message}`);
    for (const c of running) c.kill("SIGKILL"); // the measurement's other processes
    return { failed: e.message };
  }
}

const results = { adds: {}, burst: {}, spread: {}, recovery: {}, churn: {}, failures };
for (const t of ["add-serial", "add-concurrent", "add-bulk"])
  results.adds[t] = Object.fromEntries(IMPLS.map((i) => [i, []]));
for (const w of WORKERS) results.burst[w] = Object.fromEntries(IMPLS.map((i) => [i, []]));
for (const p of ["default", "finest"]) results.spread[p] = Object.fromEntries(IMPLS.map((i) => [i, []]));
results.recovery = Object.fromEntries(IMPLS.map((i) => [i, []]));

const started = Date.now();
const meta = () => ({
  date: new Date().toISOString(),
  minutes: Math.round((Date.now() - started) / 60_000),
  node: process.version,
  postgres: "15 (Debian), default settings, fsync on",
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}`,
  rounds,
  impls: IMPLS,
  n: N,
  serial: SERIAL,
  concurrency: CONCURRENCY,
  spread: SPREAD,
  lease: LEASE,
  held: HELD,
  churn: { minutes: churnMinutes, rate: churnRate },
});
/** results.json as it stands (after the rounds, and after each churn run: a long run keeps what it measured). */
const save = () =>
  smoke || only || writeFileSync(here("./results.json"), `${JSON.stringify({ meta: meta(), results }, null, 1)}\n`);
for (let r = 0; r < rounds; r++) {
  log(`round ${r + 1} of ${rounds}`);
  for (const task of Object.keys(results.adds).filter(runs))
    for (const impl of rotate(IMPLS, r)) {
      const { url } = await database();
      const { perSec } = await measured(
        `${task} ${impl}`,
        () => child(task, impl, url, { n: task === "add-serial" ? SERIAL : N }).result,
      );
      results.adds[task][impl].push(perSec);
      log(`${task} ${impl}: ${Math.round(perSec)}/s`);
    }
  for (const workers of runs("burst") ? WORKERS : [])
    for (const impl of rotate(IMPLS, r)) {
      const out = await measured(`burst ${workers} ${impl}`, () => burst(impl, workers));
      results.burst[workers][impl].push(out);
      log(
        `burst ${workers}w ${impl}: ${Math.round(out.perSec)}/s, first late ${Math.round(out.firstLateMs)} ms, early ${out.early} lost ${out.lost} dup ${out.dup}`,
      );
    }
  for (const polling of runs("spread") ? ["default", "finest"] : [])
    for (const impl of rotate(IMPLS, r)) {
      if (impl === "tarry" && polling === "finest") continue; // tarry has no poll to set
      const out = await measured(`spread ${polling} ${impl}`, () => spread(impl, polling));
      results.spread[polling][impl].push(out);
      log(
        `spread ${polling} ${impl}: p50 ${Math.round(out.p50)} p99 ${Math.round(out.p99)} ms, early ${out.early} lost ${out.lost}`,
      );
    }
  for (const impl of runs("recovery") ? rotate(IMPLS, r) : []) {
    const out = await measured(`recovery ${impl}`, () => recovery(impl));
    results.recovery[impl].push(out);
    log(`recovery ${impl}: ${out.ms === null ? `none within ${out.cap} ms` : `${out.ms} ms`}`);
  }
}
save();
for (const impl of runs("churn") ? IMPLS : []) {
  const out = await measured(`churn ${impl}`, () => churn(impl));
  save();
  results.churn[impl] = out;
  log(
    `churn ${impl}: dead max ${out.maxDead} final ${out.finalDead}, bytes max ${out.maxBytes} final ${out.finalBytes}, lost ${out.lost}`,
  );
}
await pg.stop();

if (smoke) {
  // Every delivery run: nothing early, lost or twice; tarry's in due order per worker, and a killed worker's items redelivered.
  const bad = [...failures];
  const runs = [
    ...Object.entries(results.burst).flatMap(([w, byImpl]) =>
      Object.entries(byImpl).flatMap(([i, xs]) => xs.map((x) => [`burst ${w} ${i}`, i, x])),
    ),
    ...Object.entries(results.spread).flatMap(([p, byImpl]) =>
      Object.entries(byImpl).flatMap(([i, xs]) => xs.map((x) => [`spread ${p} ${i}`, i, x])),
    ),
    ...Object.entries(results.churn).map(([i, x]) => [`churn ${i}`, i, x]),
  ];
  for (const [what, impl, x] of runs) {
    if (x.early || x.lost || x.dup) bad.push(`${what}: ${x.early} early, ${x.lost} lost, ${x.dup} twice`);
    if (impl === "tarry" && x.outOfOrder) bad.push(`${what}: ${x.outOfOrder} out of due order`);
  }
  for (const [task, byImpl] of Object.entries(results.adds))
    for (const [impl, xs] of Object.entries(byImpl)) if (!xs.every((x) => x > 0)) bad.push(`${task} ${impl}: no rate`);
  for (const x of results.recovery.tarry ?? []) if (x.ms === null) bad.push(`recovery tarry: not within ${x.cap} ms`);
  if (bad.length) {
    console.error(`smoke run failed:\n  ${bad.join("\n  ")}`);
    process.exit(1);
  }
  console.log(`smoke run passed: ${IMPLS.join(", ")}; every workload; nothing early, lost or twice`);
} else if (only) {
  console.log(medians(results));
} else {
  save();
  writePage(meta(), results);
}

/** The medians of a partial run (--only), one line per workload and library. */
function medians(r) {
  const median = (xs) => {
    const s = xs.filter((x) => typeof x === "number").sort((a, b) => a - b);
    return s.length ? Math.round(s[Math.floor((s.length - 1) / 2)]) : "failed";
  };
  const lines = [];
  const each = (what, byImpl, pick) => {
    for (const [impl, xs] of Object.entries(byImpl)) if (xs.length) lines.push(`${what} ${impl}: ${pick(xs)}`);
  };
  for (const [task, byImpl] of Object.entries(r.adds)) each(task, byImpl, (xs) => `${median(xs)}/s`);
  for (const [w, byImpl] of Object.entries(r.burst))
    each(
      `burst ${w}w`,
      byImpl,
      (xs) => `${median(xs.map((x) => x.perSec))}/s, first late ${median(xs.map((x) => x.firstLateMs))} ms`,
    );
  for (const [p, byImpl] of Object.entries(r.spread))
    each(`spread ${p}`, byImpl, (xs) => `p50 ${median(xs.map((x) => x.p50))} p99 ${median(xs.map((x) => x.p99))} ms`);
  each("recovery", r.recovery, (xs) => `${median(xs.map((x) => x.ms))} ms`);
  return `medians of ${rounds} round(s):\n  ${lines.join("\n  ")}`;
}
