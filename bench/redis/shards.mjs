#!/usr/bin/env node
// One queue on a Redis Cluster of three primaries it starts (tools/redis-server.mjs),
// with `shards: 1` and `shards: 3`, interleaved over rounds:
//
//   node bench/redis/shards.mjs [--rounds R] [--n N]     default: 3 rounds, 2·10^4 items
//
// Each run: 2 worker processes (this file, forked) × process() with concurrency 8 on a fresh
// queue; N items offered (offerMany, from this process) due at one instant 3 s ahead; the
// burst's deliveries/s = N / (last delivery − the due instant); every primary's commands and
// script calls (INFO commandstats, reset before the run) and CPU time (INFO cpu). Prints one
// JSON line per run and a last line with the medians. Also the hook of bench/redis/run.mjs:
// `runShards()` (the runs) and `shardRows()` (the rows of bench/redis/results.md).

import { fork } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);
const WORKERS = 2;
const CONCURRENCY = 8;

if (process.argv[2] === "--worker") {
  const { seeds, name, shards } = JSON.parse(process.argv[3]);
  const { Cluster } = await import("ioredis");
  const { RedisDelayQueue } = await import("tarry-queue/redis");
  const redis = new Cluster(seeds, { enableAutoPipelining: true });
  const queue = new RedisDelayQueue({ redis, name, shards, onerror: () => {} });
  let count = 0;
  let last = 0;
  let early = 0;
  const ids = new Set();
  let twice = 0;
  const worker = queue.process(
    (_value, job) => {
      const now = Date.now();
      if (Math.floor(job.deadline) > now) early++;
      if (ids.has(job.id)) twice++;
      ids.add(job.id);
      count++;
      last = now;
    },
    { concurrency: CONCURRENCY },
  );
  while ((await queue.stats()).wakes === 0) await new Promise((r) => setTimeout(r, 10));
  process.send({ type: "ready" });
  const cpu0 = process.cpuUsage();
  const tick = setInterval(() => process.send({ type: "count", count }), 50);
  process.on("message", async (m) => {
    if (m.type !== "stop") return;
    clearInterval(tick);
    await worker.close();
    await queue.close();
    await redis.quit();
    const cpu = process.cpuUsage(cpu0);
    process.send(
      { type: "done", count, last, early, twice, ids: [...ids], cpuMs: (cpu.user + cpu.system) / 1000 },
      () => process.exit(0),
    );
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Runs the rounds on a cluster of three primaries it starts and stops; resolves with every run.
 * @param {{ rounds?: number, n?: number, log?: (run: object) => void }} [o]
 */
export async function runShards({ rounds = 3, n = 20_000, log = () => {} } = {}) {
  const { startCluster } = await import("../../tools/redis-server.mjs");
  const { Cluster } = await import("ioredis");
  const { RedisDelayQueue } = await import("tarry-queue/redis");
  const cluster = await startCluster(3);
  const client = new Cluster(cluster.seeds, { enableAutoPipelining: true });
  const out = [];
  try {
    for (let r = 0; r < rounds; r++) {
      for (const shards of r % 2 ? [3, 1] : [1, 3]) {
        const name = `bench-${r}-${shards}`;
        const workers = [];
        for (let w = 0; w < WORKERS; w++) {
          const c = fork(here, ["--worker", JSON.stringify({ seeds: cluster.seeds, name, shards })], {
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          const h = { c, count: 0 };
          h.ready = new Promise((res) => c.on("message", (m) => m.type === "ready" && res()));
          h.done = new Promise((res) => c.on("message", (m) => m.type === "done" && res(m)));
          c.on("message", (m) => m.type === "count" && (h.count = m.count));
          workers.push(h);
        }
        await Promise.all(workers.map((h) => h.ready));
        const queue = new RedisDelayQueue({ redis: client, name, shards, onerror: () => {} });
        const due = Date.now() + 3000;
        const items = Array.from({ length: n }, (_, i) => ({ value: { i }, deadline: due, id: `i${i}` }));
        for (let i = 0; i < n; i += 2000) await queue.offerMany(items.slice(i, i + 2000));
        await queue.close();
        const before = await serverFigures(cluster.nodes, true);
        const end = Date.now() + 120_000;
        while (workers.reduce((a, h) => a + h.count, 0) < n && Date.now() < end)
          await new Promise((res) => setTimeout(res, 20));
        const after = await serverFigures(cluster.nodes, false);
        for (const h of workers) h.c.send({ type: "stop" });
        const done = await Promise.all(workers.map((h) => h.done));
        const delivered = new Set(done.flatMap((d) => d.ids));
        const last = Math.max(...done.map((d) => d.last));
        const run = {
          shards,
          round: r,
          n,
          deliveriesPerSec: Math.round(n / ((last - due) / 1000)),
          lost: n - delivered.size,
          early: done.reduce((a, d) => a + d.early, 0),
          twice: done.reduce((a, d) => a + d.count, 0) - delivered.size,
          commandsPerPrimary: after.map((a) => a.calls),
          scriptsPerPrimary: after.map((a) => a.scripts),
          redisCpuMsPerPrimary: after.map((a, i) => Math.round(a.cpuMs - before[i].cpuMs)),
          workerCpuMs: done.map((d) => Math.round(d.cpuMs)),
          load: os.loadavg()[0],
        };
        out.push(run);
        log(run);
        await client.flushall().catch(() => {});
        await Promise.all(cluster.nodes.map((node) => node.cli("flushall")));
      }
    }
  } finally {
    client.disconnect();
    await cluster.stop();
  }
  return out;
}

/**
 * Each primary's commands and script calls since `reset` (INFO commandstats) and CPU ms so far.
 * @param {any[]} nodes
 * @param {boolean} reset CONFIG RESETSTAT first (the burst is measured from here)
 */
async function serverFigures(nodes, reset) {
  return Promise.all(
    nodes.map(async (node) => {
      if (reset) await node.cli("config", "resetstat");
      const stats = await node.cli("info", "commandstats");
      let calls = 0;
      let scripts = 0;
      for (const m of stats.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
        if (m[1] === "info" || m[1] === "config|resetstat" || m[1] === "config") continue;
        calls += Number(m[2]);
        if (m[1] === "evalsha" || m[1] === "eval") scripts += Number(m[2]);
      }
      const cpu = await node.cli("info", "cpu");
      const cpuMs =
        ["used_cpu_sys", "used_cpu_user"].reduce((a, k) => a + Number(cpu.match(new RegExp(`${k}:([\\d.]+)`))[1]), 0) *
        1000;
      return { calls, scripts, cpuMs };
    }),
  );
}

const desc = (xs) => [...xs].sort((a, b) => b - a);

/** The medians by K: deliveries/s, and commands and CPU per primary (busiest first). */
export function summary(runs) {
  const by = {};
  for (const k of [...new Set(runs.map((r) => r.shards))]) {
    const rs = runs.filter((r) => r.shards === k);
    by[k] = {
      deliveriesPerSec: median(rs.map((r) => r.deliveriesPerSec)),
      // Busiest primary first (which primary holds a queue of one shard depends on its name).
      commandsPerPrimary: [0, 1, 2].map((i) => median(rs.map((r) => desc(r.commandsPerPrimary)[i]))),
      redisCpuMsPerPrimary: [0, 1, 2].map((i) => median(rs.map((r) => desc(r.redisCpuMsPerPrimary)[i]))),
      lost: rs.reduce((a, r) => a + r.lost, 0),
      early: rs.reduce((a, r) => a + r.early, 0),
      twice: rs.reduce((a, r) => a + r.twice, 0),
      runs: rs.length,
    };
  }
  return by;
}

/**
 * The rows of bench/redis/results.md for these runs (tarry only: BullMQ does not shard a queue).
 * @param {any[]} runs
 * @param {(x: number) => string} fmt
 */
export function shardRows(runs, fmt) {
  const by = summary(runs);
  const one = by[1];
  const three = by[3];
  if (!one || !three) return [];
  const n = runs[0].n;
  const spread = (xs) => xs.map((x) => (x ? fmt(x) : "0")).join(" / ");
  return [
    `| one queue on 3 primaries, ${fmt(n)} items due at once, ${WORKERS} workers × ${CONCURRENCY}: deliveries/s with shards 1 / 3 (tarry only) | ${fmt(one.deliveriesPerSec)} / ${fmt(three.deliveriesPerSec)} | | ×${(three.deliveriesPerSec / one.deliveriesPerSec).toFixed(2)} |`,
    `| the same: commands per primary (busiest first), shards 1 → 3 | ${spread(one.commandsPerPrimary)} → ${spread(three.commandsPerPrimary)} | | |`,
    `| the same: delivered early / lost / twice (${one.runs + three.runs} runs) | ${one.early + three.early} / ${one.lost + three.lost} / ${one.twice + three.twice} | | |`,
  ];
}

if (process.argv[2] !== "--worker" && process.argv[1] === here) {
  const argv = process.argv.slice(2);
  const flag = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const runs = await runShards({
    rounds: Number(flag("--rounds") ?? 3),
    n: Number(flag("--n") ?? 20_000),
    log: (line) => console.log(JSON.stringify(line)),
  });
  console.log(JSON.stringify({ medians: summary(runs) }));
}
