// A worker process for the Redis tests (forked by tests/redis/fleet.mjs): consumes the given
// queues and reports every delivery to its parent over IPC, in batches: [name, id, time,
// deadline, attempt, value, schedule].
//
// argv[2]: JSON { url | cluster (seed nodes), names, mode, concurrency, visibilityTimeout,
//   maxAttempts, safetyInterval, shards }
// mode "take": take() loops that ack each job (and report whether the ack held);
// "process": process() with a handler that returns at once; "hold": process() with a handler
// that never returns (its leases are extended until the process dies); "slow": process() with a
// handler that takes handleMs; "throw": process() with a handler that always throws.

import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";

const cfg = JSON.parse(process.argv[2]);
const redis = cfg.cluster ? new Cluster(cfg.cluster, { enableAutoPipelining: true }) : cfg.url;
let errors = 0;
const queues = cfg.names.map(
  (name) =>
    new RedisDelayQueue({
      redis,
      name,
      visibilityTimeout: cfg.visibilityTimeout ?? 5000,
      maxAttempts: cfg.maxAttempts ?? 5,
      safetyInterval: cfg.safetyInterval ?? 5000,
      shards: cfg.shards,
      onerror: () => errors++,
    }),
);

let got = [];
let acks = [];
const flush = () => {
  if (got.length || acks.length) process.send({ type: "got", got, acks });
  got = [];
  acks = [];
};
const flusher = setInterval(flush, 50);

const record = (name, job) => got.push([name, job.id, Date.now(), job.deadline, job.attempt, job.value, job.schedule]);

const workers = [];
for (const [i, q] of queues.entries()) {
  const name = cfg.names[i];
  if (cfg.mode === "take") {
    for (let c = 0; c < cfg.concurrency; c++) {
      (async () => {
        for await (const job of q) {
          record(name, job);
          try {
            acks.push([name, job.id, await job.ack()]);
          } catch {
            errors++; // Redis unreachable: the lease runs out and the item comes back
          }
        }
      })();
    }
  } else {
    const handler = {
      process: async () => {},
      hold: () => new Promise(() => {}),
      slow: () => new Promise((r) => setTimeout(r, cfg.handleMs)),
      throw: async () => {
        throw new Error("this handler always fails");
      },
    }[cfg.mode];
    workers.push(
      q.process(
        (_value, job) => {
          record(name, job);
          return handler();
        },
        { concurrency: cfg.concurrency, retryDelayMs: 0 },
      ),
    );
  }
}

// Tell the parent when every queue is consuming (its first wake has come back from Redis).
for (const q of queues) while ((await q.stats()).wakes === 0) await new Promise((r) => setTimeout(r, 10));
process.send({ type: "ready" });

process.on("message", async (m) => {
  if (m.type !== "stop") return;
  await Promise.all(queues.map((q) => q.close()));
  if (cfg.cluster) await redis.quit();
  clearInterval(flusher);
  flush();
  process.send({ type: "stopped", errors }, () => process.exit(0));
});
