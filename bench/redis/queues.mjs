#!/usr/bin/env node
// Many queues in one process, opened by URL, against a private redis-server:
//
//   node bench/redis/queues.mjs [--spread MS] [count ...]      default: 1000 10000
//
// For each count, in a fresh process (this file forks itself): the time until every queue
// answered its first call (open), the connections Redis counts for this process while every
// queue consumes (CLIENT LIST, the measuring client left out), and the lateness (arrival −
// asked due time, by this process's wall clock) of one item per queue offered due 2 s later
// (with --spread MS: 2 s plus a seeded uniform share of MS, so that the items of the queues come
// due one after another over MS instead of together),
// and how much of it is the deadline stored later than asked (the server's deadline − asked);
// and, from INFO commandstats, the script runs (EVAL and EVALSHA) Redis made and the ms it spent
// in them from the offers to the last ack (scripts, scriptMs). Prints one JSON line per count.

import { fileURLToPath } from "node:url";

const here = fileURLToPath(import.meta.url);

if (process.argv[2] === "--child") {
  const { port, count, spread } = JSON.parse(process.argv[3]);
  const { rng } = await import("../rng.mjs");
  const next = rng(22);
  const delays = Array.from({ length: count }, () => 2000 + Math.floor(next() * spread));
  const { Redis } = await import("ioredis");
  const { RedisDelayQueue } = await import("tarry-queue/redis");
  const url = `redis://127.0.0.1:${port}`;
  const raw = new Redis(url);
  await raw.ping();
  const warnings = [];
  process.on("warning", (w) => warnings.push(w.name));
  const errors = [];
  const t0 = performance.now();
  const queues = [];
  for (let i = 0; i < count; i++)
    queues.push(new RedisDelayQueue({ redis: url, name: `q${i}`, onerror: (e) => errors.push(e) }));
  const opened = await Promise.allSettled(queues.map((q) => q.size()));
  const open = performance.now() - t0;
  const failed = opened.filter((r) => r.status === "rejected");
  if (failed.length > 0) {
    const connections = (await raw.client("LIST")).split("\n").filter((l) => l.trim()).length - 1;
    const firstError = String(failed[0].reason?.message);
    process.send({ count, openMs: Math.round(open), openFailed: failed.length, connections, firstError });
    process.exit(0);
  }
  const late = [];
  const stored = [];
  let early = 0;
  const asked = new Array(count);
  const arrived = queues.map((q, i) =>
    q.take().then((job) => {
      const l = Date.now() - asked[i];
      if (l < 0) early++;
      late.push(l);
      stored.push(job.deadline - asked[i]);
      return job.ack();
    }),
  );
  // Every consumer subscribed before the offers.
  await new Promise((r) => setTimeout(r, 500));
  await raw.config("RESETSTAT");
  await Promise.all(
    queues.map((q, i) => {
      asked[i] = Date.now() + delays[i];
      return q.offer(i, delays[i]);
    }),
  );
  const list = await raw.client("LIST");
  const connections = list.split("\n").filter((l) => l.trim()).length - 1;
  await Promise.all(arrived);
  let scripts = 0;
  let scriptUs = 0;
  for (const m of (await raw.info("commandstats")).matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+),usec=(\d+)/gm)) {
    scripts += Number(m[1]);
    scriptUs += Number(m[2]);
  }
  late.sort((a, b) => a - b);
  stored.sort((a, b) => a - b);
  const at = (xs, p) => Math.round(xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]);
  const q = (p) => at(late, p);
  const t1 = performance.now();
  await Promise.all(queues.map((q) => q.close()));
  const closing = performance.now() - t1;
  await new Promise((r) => setTimeout(r, 300));
  const left = (await raw.client("LIST")).split("\n").filter((l) => l.trim()).length - 1;
  raw.disconnect();
  process.send({
    count,
    spread,
    openMs: Math.round(open),
    connections,
    latenessP50: q(0.5),
    latenessP99: q(0.99),
    storedLateP50: at(stored, 0.5),
    storedLateP99: at(stored, 0.99),
    early,
    scripts,
    scriptMs: Math.round(scriptUs / 1000),
    closeMs: Math.round(closing),
    connectionsAfterClose: left,
    errors: errors.length,
    firstError: errors[0] ? String(errors[0]?.message ?? errors[0]) : undefined,
    warnings,
  });
  process.exit(0);
} else {
  const { runCounts } = await import("./queues-run.mjs");
  await runCounts(here);
}
