// Orders that cancel themselves unless paid, across processes: `npm run example:redis` starts a
// private Redis, two worker processes and a producer (this process). Each order is offered with
// its id and a payment window; paying cancels it by id, asking for more time reschedules it; a
// worker takes each unpaid order when its window closes. The worker that takes order-3 is killed
// before it is done: its lease runs out and the other worker cancels order-3 instead.

import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";

const [role, redisUrl, workerName] = process.argv.slice(2);
const t0 = Number(process.env.T0 ?? Date.now());
const at = () => `${String(Date.now() - t0).padStart(5)} ms`;

if (role === "worker") {
  // A worker process: cancels each order whose payment window closed.
  const queue = new RedisDelayQueue({ redis: redisUrl, name: "orders", visibilityTimeout: 1000 });
  queue.process(async (order, job) => {
    // job.deadline: when it came due by Redis' clock (its window closed, or its last lease ran out)
    const late = Date.now() - job.deadline;
    if (order.slow && job.attempt === 1) {
      console.log(`${at()}  ${workerName}: cancelling order ${job.id} (attempt ${job.attempt}), slowly...`);
      process.send("holding"); // ...and the producer kills this process: the order is never acked
      await sleep(60_000);
    }
    console.log(
      `${at()}  ${workerName}: order ${job.id} CANCELLED, not paid in time (attempt ${job.attempt}, ${Math.round(late)} ms after it came due)`,
    );
  });
  process.send("ready");
} else {
  const redis = await startRedis();
  console.log(`${at()}  private Redis on ${redis.url}`);
  const workers = ["worker A", "worker B"].map((name) =>
    fork(fileURLToPath(import.meta.url), ["worker", redis.url, name], { env: { ...process.env, T0: String(t0) } }),
  );
  await Promise.all(workers.map((w) => new Promise((r) => w.once("message", r))));
  const holding = Promise.race(
    workers.map((w, i) => new Promise((r) => w.on("message", (m) => m === "holding" && r([w, i])))),
  );

  const queue = new RedisDelayQueue({ redis: redis.url, name: "orders" });
  const place = async (id, windowMs, extra = {}) => {
    await queue.offer({ items: 1, ...extra }, windowMs, { id });
    console.log(`${at()}  producer: order ${id} placed, pay within ${windowMs} ms`);
  };
  await place("order-1", 600);
  await place("order-2", 900);
  await place("order-3", 1200, { slow: true });
  await place("order-4", 1500);
  await sleep(300);
  console.log(
    `${at()}  producer: order-2 paid: ${(await queue.cancel("order-2")) ? "its timeout is cancelled" : "too late"}`,
  );
  await queue.reschedule("order-4", 2000);
  console.log(`${at()}  producer: order-4 asked for more time: ${Math.round(await queue.delayOf("order-4"))} ms left`);

  const [holder, i] = await holding;
  holder.kill("SIGKILL");
  console.log(
    `${at()}  producer: worker ${"AB"[i]} killed (kill -9) while cancelling order-3; its lease runs out in 1 s`,
  );

  while ((await queue.size()) + (await queue.stats()).inFlight > 0) await sleep(100);
  const s = await queue.stats();
  console.log(`${at()}  done: ${s.pending} pending, ${s.inFlight} in flight, ${s.dead} dead letters`);
  for (const w of workers) w.kill();
  await queue.close();
  await redis.stop();
}
