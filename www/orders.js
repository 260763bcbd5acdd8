// The orders: every pending order sits in one DelayQueue, due when its payment window closes.
// Paying cancels it by handle, "+30 s" reschedules it, and the consumer (one `for await`
// loop) cancels whatever comes out of the queue: the orders nobody paid in time.
import { seconds, euros } from "./format.js";

const EXTEND_MS = 30_000;

export class Orders {
  /** Pending orders by id; the queue holds the same objects, by deadline. */
  pending = new Map();
  counts = { timeout: 0, paid: 0, rescheduled: 0 };
  /** Whether orders were added or removed since the timeline last listed them. */
  changed = true;
  #nextId = 1001;
  #log;

  /**
   * @param {import("../js/tarry.d.ts").DelayQueue} queue
   * @param {(kind: string, order: object | null, text: string, late?: number) => void} log
   */
  constructor(queue, log) {
    this.queue = queue;
    this.#log = log;
  }

  /** Places an order whose payment window closes `windowMs` from now. */
  place(customer, item, amount, windowMs) {
    const order = { id: this.#nextId++, customer, item, amount, windowMs, deadline: 0, handle: 0 };
    // The clock is read before the offer, so the queue's own deadline is never earlier
    // than this one: lateness measured against it is never understated.
    order.deadline = performance.now() + windowMs;
    order.handle = this.queue.add(order, windowMs);
    this.pending.set(order.id, order);
    this.changed = true;
    return order;
  }

  pay(order) {
    // undefined: it timed out (or was paid) in the meantime.
    if (this.queue.cancel(order.handle) === undefined) return;
    this.pending.delete(order.id);
    this.counts.paid++;
    this.changed = true;
    this.#log(
      "paid",
      order,
      `paid ${euros(order.amount)} with ${seconds(order.deadline - performance.now())} to spare`,
    );
  }

  extend(order) {
    const now = performance.now();
    if (!this.queue.reschedule(order.handle, order.deadline - now + EXTEND_MS)) return;
    order.deadline += EXTEND_MS;
    order.windowMs += EXTEND_MS;
    this.counts.rescheduled++;
    this.changed = true;
    this.#log("rescheduled", order, `window extended by 30 s, now closes in ${seconds(order.deadline - now)}`);
  }

  /** Cancels every pending order at once ("Cancel all"). */
  clear() {
    const n = this.queue.size;
    this.queue.clear();
    this.pending.clear();
    this.changed = true;
    this.#log("cleared", null, `cleared ${n.toLocaleString("en")} pending orders`);
  }

  /** The consumer: every order that comes out of the queue was not paid in time. */
  async cancelUnpaid(onLate) {
    for await (const order of this.queue) {
      const late = performance.now() - order.deadline;
      this.pending.delete(order.id);
      this.counts.timeout++;
      this.changed = true;
      onLate(late);
      this.#log("timeout", order, `not paid within ${seconds(order.windowMs)}: cancelled`, late);
    }
  }
}
