#!/usr/bin/env node
// BullMQ beside bench/redis/queues.mjs: many Queue + Worker pairs in one process against a
// private redis-server, as few connections as BullMQ allows (every Queue on one shared ioredis
// client, every Worker given one shared client, which BullMQ duplicates for each Worker's
// blocking reads):
//
//   node bench/redis/queues-bullmq.mjs [--spread MS] [count ...]     default: 1000 10000
//
// For each count, in a fresh process (this file forks itself): the time until every Queue
// answered and every Worker was ready (open), the connections Redis counts for this process
// while every worker consumes (CLIENT LIST, the measuring client left out), and the lateness
// (arrival − asked due time, by this process's wall clock) of one job per queue added due 2 s
// later (with --spread MS, the due times of queues.mjs: 2 s plus a seeded share of MS). The
// server allows 30000 clients (its default, 10000, is fewer than 10^4 workers need). Prints one JSON line per count, with the same fields as queues.mjs where they apply.

import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--child") {
  const { port, count, spread } = JSON.parse(process.argv[3]);
  const { rng } = await import("../rng.mjs");
  const next = rng(22); // the due times of queues.mjs, the same seed
  const delays = Array.from({ length: count }, () => 2000 + Math.floor(next() * spread));
  const { Redis } = await import("ioredis");
  const { Queue, Worker } = await import("bullmq");
  const raw = new Redis(port);
  await raw.ping();
  const connections = async () => (await raw.client("LIST")).split("\n").filter((l) => l.trim()).length - 1;
  const shared = new Redis({ port, maxRetriesPerRequest: null, enableAutoPipelining: true });
  const sharedWorkers = new Redis({ port, maxRetriesPerRequest: null });
  const errors = [];
  const late = [];
  let early = 0;
  const asked = new Array(count);
  let got = 0;
  let all;
  const done = new Promise((r) => (all = r));
  const t0 = performance.now();
  const queues = [];
  const workers = [];
  try {
    for (let i = 0; i < count; i++) {
      queues.push(new Queue(`q${i}`, { connection: shared }));
      const w = new Worker(
        `q${i}`,
        async () => {
          const l = Date.now() - asked[i];
          if (l < 0) early++;
          late.push(l);
          if (++got === count) all();
        },
        { connection: sharedWorkers, concurrency: 1 },
      );
      w.on("error", (e) => errors.push(e));
      workers.push(w);
    }
    await Promise.all([...queues.map((q) => q.waitUntilReady()), ...workers.map((w) => w.waitUntilReady())]);
  } catch (e) {
    process.send({ count, openFailed: true, connections: await connections(), firstError: String(e?.message ?? e) });
    process.exit(0);
  }
  const open = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 500));
  await Promise.all(
    queues.map((q, i) => {
      asked[i] = Date.now() + delays[i];
      return q.add("job", i, { delay: delays[i] });
    }),
  );
  const during = await connections();
  const finished = await Promise.race([done.then(() => true), new Promise((r) => setTimeout(() => r(false), 60_000))]);
  late.sort((a, b) => a - b);
  const q = (p) => Math.round(late[Math.min(late.length - 1, Math.floor(p * late.length))]);
  process.send({
    count,
    spread,
    openMs: Math.round(open),
    connections: during,
    delivered: got,
    complete: finished,
    latenessP50: q(0.5),
    latenessP99: q(0.99),
    early,
    errors: errors.length,
    firstError: errors[0] ? String(errors[0]?.message ?? errors[0]) : undefined,
  });
  process.exit(0);
} else {
  const { runCounts } = await import("./queues-run.mjs");
  await runCounts(here);
}
