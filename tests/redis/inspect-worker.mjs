// A consumer process for tests/redis/inspect.test.mjs: process() on one queue, reporting to its
// parent over IPC each delivery as it starts and each paused or resumed event its queue
// dispatches (what this process's consumer hears).
//
// argv[2]: JSON { url, name, mode, visibilityTimeout, concurrency }: mode "ack" (the handler returns at
// once) or "hold" (the handler never returns, so the lease is held until the process dies).

import { RedisDelayQueue } from "tarry-queue/redis";

const cfg = JSON.parse(process.argv[2]);
const queue = new RedisDelayQueue({
  redis: cfg.url,
  name: cfg.name,
  visibilityTimeout: cfg.visibilityTimeout ?? 5000,
  onerror: () => {},
});
for (const type of ["paused", "resumed"]) {
  queue.addEventListener(type, () => process.send({ type, at: Date.now() }));
}
const worker = queue.process(
  async (_value, job) => {
    process.send({ type: "delivered", id: job.id, attempt: job.attempt, at: Date.now() });
    if (cfg.mode === "hold") await new Promise(() => {});
  },
  { concurrency: cfg.concurrency ?? 1 },
);
process.on("message", async (m) => {
  if (m.type === "stop") {
    await worker.close();
    await queue.close();
    process.exit(0);
  }
});
// A first call connects and subscribes the consumer (process() has started taking).
await queue.stats();
setTimeout(() => process.send({ type: "ready" }), 100);
