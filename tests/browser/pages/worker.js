// A DelayQueue inside a dedicated module worker: the browser entry loads its wasm there too,
// and the worker's own setTimeout drives the one timer. Reports what came out, and when.
import { DelayQueue } from "/js/web.js";

const queue = new DelayQueue();
const n = 60;
const items = [];
for (let i = 0; i < n; i++) items.push({ i, delay: ((i * 37) % n) * 3 + 5 }); // 5..182 ms, shuffled
const offeredAt = performance.now();
for (const item of items) {
  item.deadline = performance.now() + item.delay;
  queue.offer(item, item.delay);
}
const cancelled = { i: -1, delay: 50 };
cancelled.handle = queue.offer(cancelled, 50);
queue.cancel(cancelled.handle);
const timedOut = await queue.take({ timeout: 0 }); // nothing due yet: undefined, at once

const got = [];
for await (const item of queue) {
  got.push({ i: item.i, delay: item.delay, late: performance.now() - item.deadline });
  if (got.length === n) break;
}
postMessage({
  scope: globalThis.constructor.name,
  hasDocument: typeof document !== "undefined",
  timedOut: timedOut === undefined,
  offeredAt,
  items,
  got,
  stats: queue.stats,
});
