#!/usr/bin/env node
// tarry-queue/redis against BullMQ's delayed jobs: same Redis (a private
// redis-server, default settings), same run, every measurement in fresh processes
// (bench/redis/child.mjs), the two interleaved over rounds (their order rotating), medians.
//
//   npm run bench -- --redis              3 rounds (about 15 minutes on 2 cores), then the
//                                         schedules (bench/redis/schedules.mjs, about 10 more)
//   node bench/redis/run.mjs --rounds R   options: --rounds R, --no-defaults (skips BullMQ's
//                                         recovery with its default 30 s locks, about a minute),
//                                         --schedule-seconds S (each schedule lateness run,
//                                         default 60), --schedules-only (the schedules alone,
//                                         the other rows kept from results.json)
//
//   node bench/redis/run.mjs --render     bench/redis/results.md again from results.json
//   node bench/redis/run.mjs --only burst one kind of delivery run (burst or spread), or `wait`
//                                         (offers with waitForReplicas), `memory` (bytes per
//                                         pending item), `queues` (10^4 queues in one process:
//                                         queues.mjs, queues-bullmq.mjs) or `calls` (Redis µs per
//                                         lone call and set-up per call: calls.mjs), and nothing
//                                         else, printed, not written: for measuring a change
//
// Writes bench/redis/results.json (every sample, and the run's settings and machine) and
// bench/redis/results.md (bench/redis/report.mjs).

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { startRedis } from "../../tools/redis-server.mjs";
import { option, rotate, runOf, writeResults } from "../cli.mjs";
import { measureCalls } from "./calls.mjs";
import { render, summarise } from "./report.mjs";
import { BURST, CONCURRENCY, N, QUEUES, QUEUES_SPREAD, runner } from "./runs.mjs";
import { runSchedules } from "./schedules.mjs";
import { runShards } from "./shards.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => option(argv, name);
const rounds = Number(flag("--rounds") ?? 3);
const withDefaults = !argv.includes("--no-defaults");
const schedulesOnly = argv.includes("--schedules-only");
const scheduleSeconds = Number(flag("--schedule-seconds") ?? 60);
const only = flag("--only");
const ONLY = ["burst", "spread", "wait", "memory", "queues", "calls"];
if (only !== undefined && !ONLY.includes(only)) throw new Error(`--only: ${ONLY.join(", ")}; got ${only}`);
const IMPLS = ["tarry", "bullmq"];
const WORKERS = [1, 2, 4];
const FILL = 100_000; // pending items of a memory run
const VALUE_BYTES = [60, 100]; // the JSON values' lengths in the memory runs
const LEASE = 5000; // tarry's visibilityTimeout; BullMQ's lockDuration and stalledInterval in the fair recovery run

const log = (...a) => process.stderr.write(`[bench:redis] ${a.join(" ")}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** bench/redis/results.md from a run, formatted as the linter wants it (it is kept in the repository). */
function writePage(meta, results) {
  const page = render({ meta, results });
  writeResults(here("./results.md"), here("./results.json"), page, log);
  console.log(page);
}

if (argv.includes("--render")) {
  const { meta, results } = JSON.parse(readFileSync(here("./results.json"), "utf8"));
  writePage(meta, results);
  process.exit(0);
}

const redis = await startRedis();
const { child, delivery, recovery, serverCpu, ...runs } = runner(redis, { log });
const load = [];
/** A run of bench/redis/queues.mjs (or queues-bullmq.mjs), its sample kept. */
const queuesRun = (impl, spread) =>
  (spread ? results.queuesSpread : results.queues)[impl].push(runs.queuesRun(impl, spread));

const results = { ping: { tarry: [], bullmq: [] }, adds: {}, delivery: {}, recovery: {} };
for (const t of ["add-serial", "add-concurrent", "add-bulk"]) results.adds[t] = { tarry: [], bullmq: [] };
for (const kind of ["spread", "burst"])
  for (const w of WORKERS) results.delivery[`${kind} ${w}`] = { tarry: [], bullmq: [] };
results.recovery = { tarry: [], bullmq: [], "bullmq-defaults": [] };
// Redis bytes per pending item, by the JSON value's length.
results.memory = {};
for (const bytes of VALUE_BYTES) results.memory[bytes] = { tarry: [], bullmq: [] };
// 10^4 queues in one process: tarry each round; BullMQ (bench/redis/queues-bullmq.mjs, about a
// minute: its workers open a blocking connection each) in the first round only.
results.queues = { tarry: [], bullmq: [] };
// The same with the queues' items due one after another over QUEUES_SPREAD ms instead of together.
results.queuesSpread = { tarry: [], bullmq: [] };
// Offers/s of tarry alone, with and without waitForReplicas { count: 1 }, on the primary with one replica.
results.wait = {};
for (const t of ["add-serial", "add-concurrent"]) results.wait[t] = { tarry: [], "tarry-wait": [] };

/** One round of offers with and without waitForReplicas: a replica attached for it, then stopped. */
async function waitRound(r) {
  await redis.cli("flushall");
  const replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(redis.port)] });
  while (!/master_link_status:up/.test(await replica.cli("info", "replication"))) await sleep(50);
  for (const task of Object.keys(results.wait)) {
    for (const impl of rotate(["tarry", "tarry-wait"], r)) {
      await redis.cli("flushall");
      const n = task === "add-serial" ? 5000 : N;
      const { perSec } = await child(task, "tarry", { n, wait: impl === "tarry-wait" }).result;
      results.wait[task][impl].push(perSec);
      log(`${task} ${impl}: ${Math.round(perSec)}/s`);
    }
  }
  await replica.stop();
}

/** One round of bytes per pending item: FILL items of each value length, each library. */
async function memoryRound(r) {
  for (const bytes of VALUE_BYTES)
    for (const impl of rotate(IMPLS, r)) {
      await redis.cli("flushall");
      const { bytesPerItem, keys } = await child("fill", impl, { n: FILL, bytes }).result;
      results.memory[bytes][impl].push({ bytesPerItem, keys });
      log(`memory ${bytes}-byte values ${impl}: ${bytesPerItem.toFixed(1)} B per pending item`);
    }
  await redis.cli("flushall");
}

const started = Date.now();
const uptime = () => os.loadavg()[0].toFixed(2);
if (only === "calls") {
  await redis.stop();
  console.log(JSON.stringify(await measureCalls({ rounds: Math.max(rounds, 5) })));
  process.exit(0);
}
if (only === "memory" || only === "queues") {
  for (let r = 0; r < rounds; r++) {
    if (only === "memory") await memoryRound(r);
    else
      for (const impl of r === 0 ? rotate(IMPLS, r) : ["tarry"])
        for (const spread of [false, true]) queuesRun(impl, spread);
  }
  await redis.stop();
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  if (only === "memory")
    for (const bytes of VALUE_BYTES) {
      const m = (impl) => median(results.memory[bytes][impl].map((x) => x.bytesPerItem));
      console.log(
        `${bytes}-byte values: ${m("tarry").toFixed(1)} B per pending item, BullMQ ${m("bullmq").toFixed(1)} B (×${(m("tarry") / m("bullmq")).toFixed(2)}; medians of ${rounds}, ${FILL} items); tarry's keys: ${JSON.stringify(results.memory[bytes].tarry[0].keys)}`,
      );
    }
  else console.log(JSON.stringify({ together: results.queues, spread: results.queuesSpread }));
  process.exit(0);
}
if (only === "wait") {
  for (let r = 0; r < rounds; r++) await waitRound(r);
  await redis.stop();
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  for (const [task, by] of Object.entries(results.wait))
    console.log(
      `${task}: ${Math.round(median(by.tarry))}/s without, ${Math.round(median(by["tarry-wait"]))}/s with waitForReplicas { count: 1 } (medians of ${rounds})`,
    );
  process.exit(0);
}
if (only) {
  for (let r = 0; r < rounds; r++) {
    for (const w of WORKERS) {
      for (const impl of rotate(IMPLS, r)) {
        const s = await delivery(impl, only, w);
        results.delivery[`${only} ${w}`][impl].push(s);
        log(
          `${only} ${w} ${impl}: ${s.perSec ? `${Math.round(s.perSec)}/s ` : ""}p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} ms, ` +
            `worker CPU ${s.workerCpuUs.toFixed(0)} µs, Redis CPU ${s.redisCpuUs.toFixed(0)} µs, commands ${s.commandUs.toFixed(1)} µs ` +
            `(${s.commandsPerItem.toFixed(2)} commands, ${s.scriptsPerItem.toFixed(2)} scripts) per item; lost ${s.lost} twice ${s.twice} early ${s.early}`,
        );
      }
    }
  }
  await redis.stop();
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  for (const w of WORKERS)
    for (const impl of IMPLS) {
      const xs = results.delivery[`${only} ${w}`][impl];
      const m = (k) => median(xs.map((x) => x[k]));
      console.log(
        `${only} ${w} × ${CONCURRENCY} ${impl}: ${only === "burst" ? `${Math.round(m("perSec"))} deliveries/s, ` : ""}p50 ${m("p50").toFixed(1)} p99 ${m("p99").toFixed(1)} ms, ` +
          `worker CPU ${m("workerCpuUs").toFixed(0)} µs, Redis CPU ${m("redisCpuUs").toFixed(0)} µs, Redis commands ${m("commandUs").toFixed(1)} µs, ` +
          `${m("commandsPerItem").toFixed(2)} commands and ${m("scriptsPerItem").toFixed(3)} scripts per item (medians of ${xs.length})`,
      );
    }
  process.exit(0);
}
for (let r = 0; r < (schedulesOnly ? 0 : rounds); r++) {
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
    results.recovery[impl].push(await recovery(impl, bullmq, LEASE));
  }
  await waitRound(r);
  await memoryRound(r);
  for (const impl of r === 0 ? rotate(IMPLS, r) : ["tarry"])
    for (const spread of [false, true]) queuesRun(impl, spread);
  load.push(os.loadavg()[0]);
}
if (withDefaults && !schedulesOnly) results.recovery["bullmq-defaults"].push(await recovery("bullmq", {}, LEASE));
// Redis µs per lone call and set-up per call (bench/redis/calls.mjs, a server of its own).
if (!schedulesOnly) results.calls = await measureCalls({ rounds: Math.max(rounds, 5) });
log(`schedules (load ${uptime()})`);
const scheduleStarted = Date.now();
load.push(os.loadavg()[0]);
results.schedules = await runSchedules({
  redis,
  spawn: (task, impl, extra) => child(task, impl, extra, "./schedule-child.mjs"),
  serverCpu,
  log,
  impls: IMPLS,
  seconds: scheduleSeconds,
  rotate,
});
load.push(os.loadavg()[0]);
await redis.stop();
// One queue over three primaries, shards 1 and 3 (bench/redis/shards.mjs, on a cluster of its own).
if (!schedulesOnly)
  results.shards = await runShards({ rounds, log: (r) => log(`shards ${r.shards}: ${r.deliveriesPerSec}/s`) });

// --- the page ------------------------------------------------------------------------------

let meta = {
  ...runOf(`npm run bench -- --redis${argv.length ? ` ${argv.join(" ")}` : ""}`, started),
  redis: execFileSync("redis-server", ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)[1],
  load,
  rounds,
  withDefaults,
  n: N,
  burst: BURST,
  fill: FILL,
  queues: QUEUES,
  queuesSpread: QUEUES_SPREAD,
  workers: WORKERS,
  concurrency: CONCURRENCY,
  lease: LEASE,
};
const scheduleMeta = {
  command: meta.command,
  date: meta.date,
  seconds: Math.round((Date.now() - scheduleStarted) / 1000),
  commit: meta.commit,
  load: load.slice(-2),
  scheduleSeconds,
};
if (schedulesOnly) {
  // The other rows as the last full run made them.
  const old = JSON.parse(readFileSync(here("./results.json"), "utf8"));
  Object.assign(results, old.results, { schedules: results.schedules });
  meta = old.meta;
}
meta.schedules = scheduleMeta;
const { summary } = summarise({ meta, results });
writeFileSync(here("./results.json"), `${JSON.stringify({ meta, results, summary }, null, 1)}\n`);
writePage(meta, results);
