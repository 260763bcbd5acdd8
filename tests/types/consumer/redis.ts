// A typed consumer of tarry-queue/redis (checked by tests/types/types.test.mjs with tsc
// --strict, as main.ts is): item types written as interfaces are JSON data too, and what is
// not JSON data does not compile.
import { type Json, type Jsonable, RedisDelayQueue, type RedisJob } from "tarry-queue/redis";

// Generic code over queues states the constraint.
function sizeOf<T extends Jsonable<T>>(q: RedisDelayQueue<T>): Promise<number> {
  return q.size();
}
import { expectType } from "./expect.js";

// An interface has no index signature, so `T extends Json` refused it (TS2344); the
// constraint is `T extends Jsonable<T>`, which takes it.
interface Order {
  orderId: number;
  lines: { sku: string; quantity: number }[];
  note?: string;
  paid: boolean | null;
  pair: [string, number];
  tags: readonly string[];
}
type Reminder = { text: string; at: number };

const orders = new RedisDelayQueue<Order>({ name: "orders" });
const id: Promise<string> = orders.offer({ orderId: 42, lines: [], paid: null, pair: ["a", 1], tags: [] }, 30 * 60_000);
void id;
// @ts-expect-error the value must be an Order
orders.offer({ orderId: "42" }, 1);
// Without a timeout a take resolves only with a job (undefined is what a timeout gives).
const job = await orders.take();
expectType<RedisJob<Order>>()(job);
expectType<Order>()(job.value);
expectType<RedisJob<Order>>()(await orders.take({ signal: AbortSignal.timeout(1000) }));
const timed = await orders.take({ timeout: 100 });
expectType<RedisJob<Order> | undefined>()(timed);
const perhaps: number | undefined = Math.random() < 0.5 ? 100 : undefined;
expectType<RedisJob<Order> | undefined>()(await orders.take({ timeout: perhaps }));
expectType<Promise<number>>()(sizeOf(orders));
// The keys: the queue's own, and on a queue of more than one shard every shard's.
expectType<string>()(orders.keys.pending);
expectType<string[] | undefined>()(orders.keys.shards?.map((k) => k.pending));
new RedisDelayQueue<Reminder>({ name: "reminders" });
new RedisDelayQueue<string[]>({ name: "lists" });
new RedisDelayQueue<null>({ name: "nothing" });
const anything = new RedisDelayQueue({ name: "json" });
expectType<RedisDelayQueue<Json>>()(anything);

// What is not JSON data: refused by the type checker, as the queue refuses it at run time.
interface Stamped {
  at: Date;
}
interface Counted {
  counts: Map<string, number>;
}
interface WithMethod {
  n: number;
  describe(): string;
}
// @ts-expect-error a Date is not JSON data
new RedisDelayQueue<Stamped>({ name: "x" });
// @ts-expect-error a Map is not JSON data
new RedisDelayQueue<Counted>({ name: "x" });
// @ts-expect-error a method is not JSON data
new RedisDelayQueue<WithMethod>({ name: "x" });
// @ts-expect-error undefined is not JSON data
new RedisDelayQueue<{ note: string | undefined }>({ name: "x" });
// @ts-expect-error a bigint is not JSON data
new RedisDelayQueue<{ n: bigint }>({ name: "x" });
// @ts-expect-error unknown may be anything
new RedisDelayQueue<unknown>({ name: "x" });
