// Compiled (not run) by tests/redis/types.test.mjs with `deno check`: js/redis.d.ts describes
// the API as the README shows it.
import { ClosedError, type DeadLetter, RedisDelayQueue, type RedisJob } from "../../js/redis.d.ts";

type Order = { orderId: number };
const queue = new RedisDelayQueue<Order>({ redis: "redis://127.0.0.1:6379", name: "orders", maxAttempts: 5 });
const spread = new RedisDelayQueue<Order>({ redis: "redis://127.0.0.1:6379", name: "orders-spread", shards: 3 });
void spread;
// @ts-expect-error: shards is a number
new RedisDelayQueue({ name: "orders", shards: "3" });
const id: string = await queue.offer({ orderId: 42 }, 30 * 60_000, { id: "order-42" });
await queue.offerAt({ orderId: 43 }, new Date(Date.now() + 1000), { id, ifExists: "keep" });
const ids: string[] = await queue.offerMany([
  { value: { orderId: 1 }, delayMs: 5 },
  { value: { orderId: 2 }, deadline: Date.now() + 5, id: "two", ifExists: "extend" },
]);
const cancelled: boolean = await queue.cancel("order-42");
const moved: boolean = await queue.reschedule(id, 1000);
const left: number | undefined = await queue.delayOf(id);
const size: number = await queue.size();
const { pending, inFlight, latenessP99 } = await queue.stats();
const job: RedisJob<Order> | undefined = await queue.take({ signal: AbortSignal.timeout(10), timeout: 5 });
if (job) {
  const n: number = job.value.orderId + job.attempt + job.deadline;
  const done: boolean = (await job.ack()) || (await job.nack({ delayMs: 5 })) || (await job.extend(1000));
  void n;
  void done;
}
for await (const j of queue) await j.ack();
const worker = queue.process(async (order: Order, j: RedisJob<Order>) => order.orderId + j.attempt, {
  concurrency: 10,
  retryDelayMs: (attempt) => attempt * 1000,
});
await worker.close();
const page: { items: DeadLetter<Order>[]; next: string | undefined } = await queue.deadLetters({ limit: 10 });
const dead: DeadLetter<Order>[] = (await queue.deadLetters({ limit: 10, after: page.next })).items;
const purged: number = (await queue.purgeDead({ olderThan: 60_000 })) + Number(await queue.deleteDead("order-7"));
const retried: boolean = await queue.retryDead("order-42");
await queue.close();
const closed: boolean = new ClosedError("RedisDelayQueue") instanceof Error;
// @ts-expect-error: ifExists is "replace", "keep" or "extend"
await queue.offer({ orderId: 44 }, 5, { ifExists: "skip" });
// @ts-expect-error: values are JSON data
await queue.offer(new Map(), 5);
void [ids, cancelled, moved, left, size, pending, inFlight, latenessP99, dead, purged, retried, closed];
