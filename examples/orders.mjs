// Orders that cancel themselves unless paid in time: the classic use of a delay queue.
// `npm run example` (after `npm run build`) prints each event as it happens.
import { DelayQueue } from "tarry-queue";

const WINDOW_MS = 1500; // "30 minutes" in real life; 1.5 s for the demo
const queue = new DelayQueue();
const orders = new Map(); // order id -> order
const handles = new Map(); // order id -> handle: plain numbers, safe to store beside the order
const t0 = performance.now();
const at = () => `${String(Math.round(performance.now() - t0)).padStart(5)} ms`;

function place(id, windowMs = WINDOW_MS) {
  const order = { id, dueAt: performance.now() + windowMs };
  const handle = queue.offer(order, windowMs);
  orders.set(id, order);
  handles.set(id, handle);
  console.log(`${at()}  order ${id} placed, pay within ${windowMs} ms (handle ${handle})`);
}

function pay(id) {
  // O(log n), by handle. A stale handle (the order already timed out) cancels nothing else.
  const order = queue.cancel(handles.get(id));
  console.log(
    `${at()}  order ${id} ${order ? "paid: its timeout is cancelled" : "could not be paid: it was already cancelled"}`,
  );
}

function extend(id, ms) {
  orders.get(id).dueAt = performance.now() + ms;
  queue.reschedule(handles.get(id), ms);
  console.log(`${at()}  order ${id} given ${ms} ms more`);
}

// The consumer: one loop takes orders as their payment windows expire.
const consumer = (async () => {
  for await (const order of queue) {
    const late = performance.now() - order.dueAt;
    console.log(`${at()}  order ${order.id} CANCELLED: not paid in time (timer ${late.toFixed(1)} ms late)`);
  }
})();

for (let id = 1; id <= 6; id++) place(id, WINDOW_MS + id * 100);
setTimeout(() => pay(2), 500);
setTimeout(() => pay(5), 900);
setTimeout(() => extend(3, 1200), 1000);
setTimeout(() => place(7, 300), 1100);
setTimeout(() => pay(7), 1900); // too late: order 7 already timed out at ~1400 ms

// Close the queue once every order is settled, which ends the consumer's loop.
const done = setInterval(() => {
  if (queue.size === 0 && performance.now() - t0 > 2000) {
    clearInterval(done);
    const s = queue.stats;
    console.log(
      `${at()}  all settled. timer arms: ${s.timerArms}, lateness p50 ${s.latenessP50.toFixed(2)} ms, p99 ${s.latenessP99.toFixed(2)} ms`,
    );
    queue.close();
  }
}, 50);
await consumer;
