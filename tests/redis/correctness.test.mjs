// The correctness run of tarry-queue/redis on a real Redis (a private redis-server): three
// worker processes consume one queue while a fourth process offers 10^4 items due within 5 s,
// and cancels, reschedules and replaces some by id while the workers wait. Every item must come
// out once, none before its deadline, each worker's in deadline order, none completed twice.

import { test } from "node:test";
import { startRedis } from "../../scripts/redis-server.mjs";
import { check, produce, startWorker, until, expected, allDelivered } from "./fleet.mjs";

test("3 workers, 1 producer, 10^4 items due within 5 s: all delivered once, in order, never early", async () => {
  const redis = await startRedis();
  const workers = [];
  try {
    const base = { url: redis.url, names: ["orders"], concurrency: 8 };
    workers.push(startWorker({ ...base, mode: "take" }), startWorker({ ...base, mode: "take" }));
    workers.push(startWorker({ ...base, mode: "process" }));
    await Promise.all(workers.map((w) => w.ready));
    const produced = await produce({ ...base, count: 9700, minDelay: 1000, maxDelay: 5000, edits: true });
    const want = expected(produced);
    await until(() => allDelivered(want, workers), 30_000, "every item to be delivered");
    // Anything delivered twice, or a cancelled item, would show up in this second.
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(workers.map((w) => w.stop()));
    const figures = check(produced, workers, { exactlyOnce: true });
    console.log(
      `# ${figures.delivered} delivered; lateness by the producer's clock: p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms;`,
      `per worker: ${workers.map((w) => w.got.length).join(", ")}`,
    );
    if (figures.p50 > 1000) throw new Error(`median lateness ${figures.p50} ms: the wake-ups are not working`);
    const left = await redis.cli("zcard", "tarry:{orders}:pending");
    if (left !== "0") throw new Error(`${left} items left pending`);
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await redis.stop();
  }
});
