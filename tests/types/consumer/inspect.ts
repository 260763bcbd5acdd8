// A typed consumer of the events, the inspection calls and the dashboard (checked by
// tests/types/types.test.mjs with tsc --strict, as main.ts is).
import { DelayQueue, type DurableEngine, type ItemInfo, type Page, Scheduler } from "tarry-queue";
import { dashboard, nodeListener } from "tarry-queue/dashboard";
import { RedisDelayQueue } from "tarry-queue/redis";
import { expectType } from "./expect.js";

const q = new DelayQueue<{ orderId: number }>();
q.addEventListener("delivered", (e) => {
  expectType<number>()(e.detail.lateness);
  expectType<{ orderId: number }>()(e.detail.value);
});
const off = q.on("expired", (detail) => expectType<string | undefined>()(detail.id));
expectType<() => void>()(off);
// @ts-expect-error DelayQueue has no "acked" event
q.on("acked", () => {});

new Scheduler().on("skipped", ({ reason }) => expectType<"overlap" | "missed">()(reason));

interface Order {
  orderId: number;
}
const orders = new RedisDelayQueue<Order>({ name: "orders", observe: true });
const page: Page<ItemInfo<Order>> = await orders.pending({ limit: 10 });
const item = await orders.get("order-1");
if (item !== undefined) expectType<"pending" | "inFlight" | "dead">()(item.state);
expectType<string | undefined>()(page.next);
orders.on("nacked", ({ attempt, delayMs, reason }) => void [attempt + delayMs, reason.length]);
expectType<boolean>()((await orders.stats()).paused);
expectType<Promise<boolean>>()(orders.pause());

// Code written against the engine contract takes a Redis queue (and any other engine).
async function pendingIds<T>(queue: DurableEngine<T>): Promise<string[]> {
  return (await queue.pending({ limit: 10 })).items.map((item) => item.id);
}
expectType<Promise<string[]>>()(pendingIds(orders));
const contract: DurableEngine<Order> = orders;
expectType<Promise<string>>()(contract.offer({ orderId: 1 }, 10, { ifExists: "keep" }));
// @ts-expect-error the contract's value type is the queue's
void contract.offer({ orderId: "1" }, 10);

const handler = dashboard(orders, { token: "a-long-token", values: false });
void nodeListener(handler);
// @ts-expect-error an unknown option
dashboard(orders, { tokn: "x" });
