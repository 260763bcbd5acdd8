// A worker process for the Redis tests (forked through tests/redis/fleet.mjs): consumes the given
// queues as tests/engines/fleet-worker.mjs does for every engine, and reports each delivery
// and ack to its parent.
//
// argv[2]: JSON { url | cluster (seed nodes), names, mode, concurrency, visibilityTimeout,
//   maxAttempts, safetyInterval, shards, handleMs } (mode: tests/engines/fleet-worker.mjs)

import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { fleetWorker } from "../engines/fleet-worker.mjs";

const cfg = JSON.parse(process.argv[2]);
const redis = cfg.cluster ? new Cluster(cfg.cluster, { enableAutoPipelining: true }) : cfg.url;
const fleet = fleetWorker(cfg);
const queues = cfg.names.map(
  (name) =>
    new RedisDelayQueue({
      redis,
      name,
      visibilityTimeout: cfg.visibilityTimeout ?? 5000,
      maxAttempts: cfg.maxAttempts ?? 5,
      safetyInterval: cfg.safetyInterval ?? 5000,
      shards: cfg.shards,
      onerror: fleet.onerror,
    }),
);
// A failed handler's item is due again at once: "throw" reaches maxAttempts within the test.
for (const [i, q] of queues.entries()) fleet.consume(cfg.names[i], q, { retryDelayMs: 0 });

// Ready when every queue is consuming (its first wake has come back from Redis).
for (const q of queues) while ((await q.stats()).wakes === 0) await new Promise((r) => setTimeout(r, 10));
fleet.ready(async () => {
  await Promise.all(queues.map((q) => q.close()));
  if (cfg.cluster) await redis.quit();
});
