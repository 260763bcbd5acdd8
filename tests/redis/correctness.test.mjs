// The correctness run of tarry-queue/redis on a real Redis (a private redis-server): three
// worker processes consume one queue while a fourth process offers 10^4 items due within 5 s,
// and cancels, reschedules and replaces some by id while the workers wait. Every item must come
// out once, none before its deadline, each worker's in deadline order, none completed twice.

import { test } from "node:test";
import { startRedis } from "../../tools/redis-server.mjs";
import { correctnessRun } from "./fleet.mjs";

test("3 workers, 1 producer, 10^4 items due within 5 s: all delivered once, in order, never early", async () => {
  const redis = await startRedis();
  const workers = [];
  try {
    const figures = await correctnessRun({ url: redis.url, names: ["orders"], concurrency: 8 }, 9700, workers);
    console.log(
      `# ${figures.delivered} delivered; lateness by the producer's clock: p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms;`,
      `per worker: ${workers.map((w) => w.got.length).join(", ")}`,
    );
    const left = await redis.cli("zcard", "tarry:{orders}:pending");
    if (left !== "0") throw new Error(`${left} items left pending`);
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await redis.stop();
  }
});
