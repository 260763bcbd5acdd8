// A DelayQueue inside a dedicated module worker: the browser entry loads its wasm there too,
// and the worker's own setTimeout drives the one timer. Reports what came out, and when.
import { DelayQueue, init } from "/js/web.js";

await init();

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
// take({timeout: 0}) with nothing due resolves undefined at once. Asked of a queue whose only
// item is due in a minute: on a slow machine the 5 ms items above may already be due.
const later = new DelayQueue();
later.offer({ i: -2 }, 60_000);
const timedOut = await later.take({ timeout: 0 });
later.close();

// Each take waits at most 5 s: a lost item ends the run with fewer items (and the test
// fails saying so) instead of hanging.
const got = [];
while (got.length < n) {
  const item = await queue.take({ timeout: 5000 });
  if (item === undefined) break;
  got.push({ i: item.i, delay: item.delay, late: performance.now() - item.deadline });
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
