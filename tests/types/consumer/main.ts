// A typed consumer of tarry-queue, checked by tests/types/types.test.mjs with `tsc --strict`
// against the packed tarball, under moduleResolution bundler, node16 and nodenext, with the
// DOM's lib or with @types/node (so AbortController and console exist). It compiles only if
// the types say what the package does; the @ts-expect-error lines compile only if the types
// refuse what the package refuses.
import {
  ClosedError,
  DelayQueue,
  type DelayQueueStats,
  type Handle,
  init,
  Scheduler,
  type Snapshot,
  type WasmSource,
} from "tarry-queue";
import { expectType } from "./expect.js";

// The browser's start; resolves at once elsewhere. Every kind of source init() takes.
await init();
declare const bytes: Uint8Array;
declare const response: Response;
const sources: WasmSource[] = [
  new URL("https://example.com/tarry_bg.wasm"),
  "/tarry_bg.wasm",
  bytes,
  response,
  fetch("/x"),
];
expectType<Promise<void>>()(init(sources[0]));
// @ts-expect-error not a place to load the wasm from
init(42);

interface Order {
  orderId: number;
}

// Unbounded (no capacity): offer() always gives a handle.
const orders = new DelayQueue<Order>();
expectType<DelayQueue<Order, false>>()(orders);
const h = orders.offer({ orderId: 42 }, 30 * 60_000);
expectType<Handle>()(h);
expectType<Order | undefined>()(orders.cancel(h));
// @ts-expect-error the item type is Order
orders.offer("not an order", 10);
// Ids: offer with { id }, then cancel, reschedule and delayOf by it or by the handle.
expectType<Handle>()(orders.offer({ orderId: 43 }, 30 * 60_000, { id: "order:43" }));
expectType<Order | undefined>()(orders.cancel("order:43"));
expectType<boolean>()(orders.reschedule("order:43", 10));
expectType<number | undefined>()(orders.delayOf("order:43"));
orders.offerMany([{ orderId: 44 }, { orderId: 45 }], 10, { ids: ["order:44", undefined] });
// @ts-expect-error an id is a string
orders.offer({ orderId: 46 }, 10, { id: 46 });
// @ts-expect-error misspelt: refused at run time too
orders.offer({ orderId: 47 }, 10, { idd: "order:47" });
// ifExists: what an offer does with an id an item has; one of three.
expectType<Handle>()(orders.offer({ orderId: 48 }, 10, { id: "order:48", ifExists: "extend" }));
expectType<Promise<Handle>>()(orders.put({ orderId: 48 }, 10, { id: "order:48", ifExists: "keep" }));
orders.offerMany([{ orderId: 49 }], 10, { ids: ["order:49"], ifExists: "replace" });
// @ts-expect-error ifExists is "replace", "keep" or "extend"
orders.offerAt({ orderId: 50 }, Date.now(), { id: "order:50", ifExists: "merge" });

// Thenables are refused at run time (a take() would adopt them), and by the type checker.
// @ts-expect-error a queue of Promises
new DelayQueue<Promise<number>>();
// @ts-expect-error a bounded one
new DelayQueue<Promise<number>>({ capacity: 2 });
// @ts-expect-error a queue of thenables
new DelayQueue<{ then(resolve: (v: number) => void): void }>();
// @ts-expect-error a union with a thenable
new DelayQueue<number | PromiseLike<number>>();
// A snapshot said to hold them restores as data of unknown shape (checked at run time).
declare const promises: Snapshot<Promise<number>>;
expectType<DelayQueue<unknown, false>>()(DelayQueue.restore(promises));
// A `then` that is no function is a plain property; unknown and any are not refused.
new DelayQueue<{ then: string }>().close();
new DelayQueue<unknown>().close();
new DelayQueue<any>().close();
// Generic code needs no constraint.
function drainAll<T>(q: DelayQueue<T>): T[] {
  return q.drain();
}
expectType<Order[]>()(drainAll(orders));

// An option set to undefined is its default, at run time as in the types.
new DelayQueue<string>({ capacity: undefined, keepAlive: undefined, clock: undefined }).close();

// Bounded: offer() and offerAt() can refuse with null; add() cannot.
const bounded = new DelayQueue<string>({ capacity: 2, keepAlive: false });
expectType<DelayQueue<string, true>>()(bounded);
expectType<Handle | null>()(bounded.offer("a", 10));
expectType<Handle | null>()(bounded.offerAt("b", new Date(Date.now() + 10)));
expectType<Handle>()(bounded.add("c", 10));
// @ts-expect-error a bounded queue's offer may be null
const refused: Handle = bounded.offer("d", 10);
void refused;
// A queue of either kind, as a parameter type.
const anyQueue: DelayQueue<string> = Math.random() < 2 ? bounded : new DelayQueue<string>();
expectType<Handle | null>()(anyQueue.offer("e", 1));

// offerAt with a Date or epoch ms; offerMany with one delay, an array or a Float64Array.
expectType<Handle>()(orders.offerAt({ orderId: 1 }, new Date(Date.now() + 5)));
expectType<Handle>()(orders.offerAt({ orderId: 2 }, Date.now() + 5));
expectType<Handle[]>()(orders.offerMany([{ orderId: 3 }, { orderId: 4 }], [5, 6]));
orders.offerMany([{ orderId: 5 }], new Float64Array([7]));
expectType<Promise<Handle>>()(orders.put({ orderId: 6 }, 1, { signal: AbortSignal.timeout(1000) }));

// take() with a signal and a timeout; the rest of the Java-style API.
const ac = new AbortController();
const next = await orders.take({ signal: ac.signal, timeout: 100 });
expectType<Order | undefined>()(next);
// Without a timeout, only an item: undefined is what a timeout gives.
expectType<Order>()(await orders.take());
expectType<Order>()(await orders.take({ signal: ac.signal }));
expectType<Order | undefined>()(orders.poll());
expectType<Order | undefined>()(orders.peek());
expectType<Order>()(orders.element());
expectType<Order[]>()(orders.drain(10));
expectType<Order[]>()(orders.toArray());
expectType<boolean>()(orders.reschedule(h, 10));
expectType<number | undefined>()(orders.delayOf(h));
expectType<number>()(orders.size);
expectType<number>()(orders.remainingCapacity);
expectType<DelayQueueStats>()(orders.stats);
// @ts-expect-error a take's options are { signal, timeout }
orders.take({ timeot: 5 });

// Snapshots keep the item type, through JSON too when the caller says what it holds.
const snap = orders.snapshot();
expectType<Snapshot<Order>>()(snap);
const restored = DelayQueue.restore(snap);
expectType<DelayQueue<Order, false>>()(restored);
const fromJson = DelayQueue.restore<Order>(JSON.parse(JSON.stringify(snap)));
expectType<DelayQueue<Order, false>>()(fromJson);
expectType<DelayQueue<Order, true>>()(DelayQueue.restore(snap, { capacity: 10 }));
expectType<number>()(restored.snapshot().items[0].value.orderId);
// Data of unknown shape is checked at run time, and its items are unknown.
declare const stored: unknown;
expectType<DelayQueue<unknown, false>>()(DelayQueue.restore(stored));

// Async iteration, instanceof, disposal.
for await (const order of restored) {
  expectType<Order>()(order);
  break;
}
{
  using scoped = new DelayQueue<number>();
  scoped.offer(1, 0);
}
try {
  restored.close();
  restored.poll();
} catch (e) {
  if (e instanceof ClosedError) expectType<"ClosedError">()(e.name);
}
console.log(orders instanceof DelayQueue, Object.prototype.toString.call(orders));

// The Scheduler: arguments typed by the callback.
const scheduler = new Scheduler({ onerror: (e) => console.error(e), keepAlive: false });
const job = scheduler.schedule((name: string, times: number) => name.repeat(times), 5, "hi", 2);
expectType<Handle>()(job);
// @ts-expect-error the callback takes (string, number)
scheduler.schedule((name: string, times: number) => name.repeat(times), 5, "hi", "2");
scheduler.scheduleAt(() => {}, new Date(Date.now() + 5));
expectType<boolean>()(scheduler.cancel(job));
{
  using s = new Scheduler();
  s.schedule(() => {}, 1);
}

// A clock of the test's choosing (node:test's mock.timers fakes Date, not performance.now()).
const faked = new DelayQueue<string>({ clock: () => Date.now() });
expectType<Handle>()(faked.offer("no null from an unbounded queue", 5));
// @ts-expect-error the clock returns milliseconds as a number
new DelayQueue<string>({ clock: () => new Date() });
new Scheduler({ clock: () => Date.now() }).close();
faked.close();

orders.close();
bounded.close();
