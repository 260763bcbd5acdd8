// DelayQueue: items that come out only once their delay has expired, in deadline order.
//
// Java's java.util.concurrent.DelayQueue for JS. The head is the item whose deadline is
// earliest (FIFO among equal deadlines); poll() hands it out only once its deadline has
// passed, and take() returns a Promise that resolves with it then. Java parks a leader
// thread on a condition variable; JS has one thread, so a queue keeps ONE host timer,
// armed only while a take() waits, for the earliest deadline that can serve or end a wait,
// and re-armed whenever that changes. A timer that fires early (Node's can) hands nothing
// out: the deadlines are checked against the clock, and the timer is armed again.
//
// Where things live (see ARCHITECTURE.md): the deadlines, their order and the handles in
// wasm (src/binding.rs over the Rust core); the values in a JS array by slot (slots.js),
// so only numbers cross into wasm; the timer, the clock and both halves in a Timeline
// (timeline.js). This file holds what a DelayQueue adds: waiting takes and puts, served in
// call order, and the API.
//
// Guarantees: never early (on the queue's monotonic clock); exact order with FIFO ties;
// no lost items (an item leaves the queue only in the turn in which the take that gets it
// is resolved, so an aborted or timed-out take leaves it queued); O(log n) offer, cancel,
// reschedule and poll, O(1) peek.

import { Slots } from "./slots.js";
import { Timeline } from "./timeline.js";
import { Deadlines } from "./wasm.js";
import { Waiters } from "./waiters.js";
import { readSnapshot, writeSnapshot } from "./snapshot.js";
import { ClosedError } from "./errors.js";
import {
  abortReason,
  checkBoolean,
  checkCapacity,
  checkClock,
  checkHandle,
  checkMs,
  checkSignal,
  checkValue,
  describe,
  epochOf,
  isRevoked,
  isValue,
  options,
  thenable,
} from "./arguments.js";

const dispose = Symbol.dispose ?? Symbol.for("Symbol.dispose");

/** Every live queue, so that a page becoming visible again can flush overdue items. */
const live = new Set();
const forgotten = new FinalizationRegistry((ref) => live.delete(ref));

/**
 * A delay queue: items come out in deadline order once their delay has expired.
 * See README.md for the API table and its mapping to java.util.concurrent.DelayQueue.
 */
export class DelayQueue {
  #tl;
  /** Waiting take() calls, in call order. */
  #takers = new Waiters();
  /** Waiting put() calls, in call order. */
  #putters = new Waiters();
  /** Takes waiting with a timeout, by the handle of their timeout. */
  #timed = new Slots();
  #capacity;
  #ref;

  /**
   * @param {{capacity?: number, keepAlive?: boolean, clock?: () => number}} [opts]
   */
  constructor(opts) {
    const { capacity = Infinity, keepAlive = true, clock } = options(opts, "options");
    checkCapacity(capacity, Deadlines.maxItems());
    checkBoolean(keepAlive, "keepAlive");
    if (clock !== undefined) checkClock(clock);
    this.#capacity = capacity;
    this.#tl = new Timeline("DelayQueue", capacity, keepAlive, clock, () => this.#onTimer());
    this.#ref = new WeakRef(this);
    live.add(this.#ref);
    forgotten.register(this, this.#ref, this.#ref);
  }

  /** Items in the queue, expired or not. */
  get size() {
    return this.#tl.size;
  }

  /** Room left before offer() returns null; Infinity when unbounded. */
  get remainingCapacity() {
    return this.#tl.deadlines === null ? 0 : this.#tl.deadlines.remainingCapacity;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#tl.deadlines === null;
  }

  /**
   * Figures for monitoring: size, waiting takes, timers armed now (0 or 1), total arms,
   * wake-ups (and early ones, which re-arm), items handed to takes, and their lateness.
   */
  get stats() {
    return this.#tl.stats(this.#takers.size);
  }

  /** Adds `value`, due `delayMs` from now. Returns its handle, or null when a bounded queue is full. */
  offer(value, delayMs) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    return this.#offerChecked(value, delayMs);
  }

  /** offer() of a value and delay already checked (their checks read a value's `then` once). */
  #offerChecked(value, delayMs) {
    const now = this.#tl.clock.now();
    return this.#insert(value, now + delayMs, now);
  }

  /**
   * Adds many items at once, `values[i]` due `delays[i]` ms from now (or all due `delays`
   * ms from now when it is one number), reading the clock once for the batch. Returns
   * their handles in order. Each element is read once and checked first: a bad value or
   * delay, or a batch larger than the room left, throws and adds nothing.
   */
  offerMany(values, delays) {
    if (isRevoked(values) || !Array.isArray(values))
      throw new TypeError(`values must be an array, got ${describe(values)}`);
    const n = values.length;
    const vs = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (!isValue(v)) checkValue(v, `values[${i}]`);
      vs[i] = v;
    }
    const ds = new Float64Array(n);
    if (typeof delays === "number") {
      checkMs(delays, "delays");
      ds.fill(delays);
    } else if (!isRevoked(delays) && (Array.isArray(delays) || delays instanceof Float64Array)) {
      const m = delays.length;
      if (m !== n) throw new RangeError(`delays must have one delay per value: ${m} delays for ${n} values`);
      for (let i = 0; i < n; i++) {
        const d = delays[i];
        if (typeof d !== "number" || d - d !== 0) checkMs(d, `delays[${i}]`);
        ds[i] = d;
      }
    } else {
      throw new TypeError(`delays must be a number, an array of numbers or a Float64Array, got ${describe(delays)}`);
    }
    const tl = this.#tl;
    const d = tl.open();
    const room = tl.room();
    if (n > room) throw new RangeError(`the batch of ${n} does not fit: room for ${room}`);
    const now = tl.clock.now();
    const handles = d.offerMany(now, ds);
    // All or none: none when a queue that has room on paper has run out of slots.
    if (handles.length !== n) throw new RangeError(`the batch of ${n} does not fit: the queue has no room left`);
    // One loop stores the values and copies the handles out (Array.from of a Float64Array
    // goes through its iterator: 20-45 ns per item in Node 20, more than the rest together).
    const slots = tl.values;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const h = handles[i];
      slots.put(h, vs[i]);
      out[i] = h;
    }
    if (this.#takers.size !== 0) this.#serve(now);
    return out;
  }

  /** Like offer(), but throws a RangeError when a bounded queue is full. */
  add(value, delayMs) {
    const h = this.offer(value, delayMs);
    if (h === null) throw new RangeError(`the DelayQueue is full (capacity ${this.#capacity})`);
    return h;
  }

  /**
   * Adds `value` due at the wall-clock time `deadline` (epoch ms or a Date). The deadline
   * is converted once, now, to the queue's clock: never before it as the clocks stand now,
   * and a later wall-clock jump changes nothing. Equal wall-clock deadlines keep FIFO order.
   */
  offerAt(value, deadline) {
    checkValue(value);
    const epoch = epochOf(deadline);
    const clock = this.#tl.clock;
    this.#tl.open();
    return this.#insert(value, clock.fromEpoch(epoch), clock.now());
  }

  /**
   * Inserts a checked value. With takes waiting, a due item goes to them now; a later one
   * may re-arm the timer, and if the host refuses the timer the item is taken back out and
   * the error thrown (the offer changes nothing).
   */
  #insert(value, deadline, now) {
    const tl = this.#tl;
    const h = tl.offer(value, deadline);
    if (h !== null && this.#takers.size !== 0) {
      if (deadline <= now) {
        this.#serve(now);
      } else {
        try {
          tl.armFor(h);
        } catch (e) {
          this.#serve(now); // the takes already waiting need the timer back
          throw e;
        }
      }
    }
    return h;
  }

  /**
   * Adds `value`, waiting for room when the queue is bounded and full. The delay counts
   * from the call, not from when room appears. Rejects with the signal's reason if aborted
   * first (nothing is added then).
   */
  put(value, delayMs, opts) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    const { signal } = options(opts, "options");
    checkSignal(signal);
    const tl = this.#tl;
    if (tl.deadlines === null) return Promise.reject(new ClosedError("DelayQueue"));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#putters.size === 0) {
      try {
        const h = this.#offerChecked(value, delayMs);
        if (h !== null) return Promise.resolve(h);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const deadline = tl.clock.now() + delayMs;
    return new Promise((resolve, reject) => {
      const putter = { value, deadline, resolve, reject, signal, onAbort: /** @type {(() => void) | null} */ (null) };
      if (signal) {
        putter.onAbort = () => {
          if (this.#putters.remove(putter)) reject(abortReason(signal));
        };
        signal.addEventListener("abort", putter.onAbort, { once: true });
      }
      this.#putters.push(putter);
    });
  }

  /** The expired head, removed; undefined when nothing has expired. */
  poll() {
    const tl = this.#tl;
    const d = tl.open();
    // Due by a time already handed to the binding: no clock read for a run of due items.
    let slot = d.poll(-Infinity);
    if (slot < 0) {
      slot = d.poll(tl.clock.now());
      if (slot < 0) return undefined;
    }
    const value = tl.values.take(slot);
    this.#changed();
    return value;
  }

  /**
   * The next expired item, when it expires. Takes are served in call order. With
   * `timeout` (ms) it resolves undefined if nothing expired in time; with `signal` it
   * rejects with the signal's reason when aborted. Either way no item is lost: an item
   * leaves the queue only in the turn in which a take's promise is resolved with it.
   */
  take(opts) {
    const { signal, timeout } = options(opts, "options");
    checkSignal(signal);
    if (timeout !== undefined) {
      checkMs(timeout, "timeout");
      if (timeout < 0) throw new RangeError(`timeout must not be negative, got ${timeout}`);
    }
    const tl = this.#tl;
    const d = tl.deadlines;
    if (d === null) return Promise.reject(new ClosedError("DelayQueue"));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const now = tl.clock.now();
    return new Promise((resolve, reject) => {
      const taker = { resolve, reject, signal, onAbort: /** @type {(() => void) | null} */ (null), timeout: 0 };
      this.#takers.push(taker);
      if (this.#takers.size === 1) {
        // Nobody is ahead of this take: an expired head is its at once.
        const slot = d.takeDue(now);
        if (slot >= 0) {
          this.#takers.remove(taker);
          this.#hand(taker, tl.values.take(slot));
          if (this.#putters.size !== 0) this.#serve(now);
          return;
        }
      }
      try {
        if (timeout !== undefined) {
          taker.timeout = d.addTimeout(now + timeout);
          this.#timed.put(taker.timeout, taker);
        }
        tl.sync(true);
      } catch (e) {
        // The host refused the timer: this take ends with its error, and nothing changed
        // (the takes already waiting get the timer back, or the same error).
        this.#forget(taker);
        reject(e);
        this.#serve(now);
        return;
      }
      if (signal) {
        taker.onAbort = () => {
          if (!this.#forget(taker)) return;
          this.#serve(tl.clock.now());
          reject(abortReason(signal));
        };
        signal.addEventListener("abort", taker.onAbort, { once: true });
      }
    });
  }

  /** The head, expired or not; undefined when empty. */
  peek() {
    const slot = this.#tl.open().head();
    return slot < 0 ? undefined : this.#tl.values.get(slot);
  }

  /** The head, expired or not; throws when empty. */
  element() {
    const slot = this.#tl.open().head();
    if (slot < 0) throw new RangeError("element(): the DelayQueue is empty");
    return this.#tl.values.get(slot);
  }

  /** Removes the item a handle names and returns its value; undefined for a stale or unknown handle. O(log n). */
  cancel(handle) {
    checkHandle(handle, "offer");
    const value = this.#tl.cancel(handle);
    if (value !== undefined) this.#changed();
    return value;
  }

  /** Moves an item's deadline to `delayMs` from now; false for a stale or unknown handle. O(log n). */
  reschedule(handle, delayMs) {
    checkHandle(handle, "offer");
    checkMs(delayMs, "delayMs");
    const tl = this.#tl;
    const d = tl.open();
    const now = tl.clock.now();
    const moved = d.reschedule(handle, now + delayMs);
    if (moved && this.#takers.size !== 0) this.#serve(now);
    return moved;
  }

  /** Milliseconds until the item is due (negative when overdue); undefined for a stale or unknown handle. */
  delayOf(handle) {
    checkHandle(handle, "offer");
    return this.#tl.delayOf(handle);
  }

  /** Removes and returns up to `max` expired items, in expiry order. */
  drain(max = Infinity) {
    if (typeof max !== "number") throw new TypeError(`max must be a number, got ${describe(max)}`);
    if (!(max >= 0) || (max !== Infinity && !Number.isInteger(max)))
      throw new RangeError(`max must be a non-negative integer or Infinity, got ${max}`);
    const tl = this.#tl;
    const slots = tl.open().drain(tl.clock.now(), max);
    const values = tl.values;
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) out[i] = values.take(slots[i]);
    if (out.length !== 0) this.#changed();
    return out;
  }

  /** Removes every item. Handles given out so far stay stale. */
  clear() {
    const tl = this.#tl;
    tl.open().clear();
    tl.values.clear();
    this.#changed();
  }

  /** Every item in deadline order (FIFO among ties), without removing any. O(n log n). */
  toArray() {
    const tl = this.#tl;
    const slots = tl.open().sortedSlots();
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) out[i] = tl.values.get(slots[i]);
    return out;
  }

  /**
   * The pending items as plain, JSON-serialisable data: `{ version, size, items: [{ value,
   * deadline }] }` in deadline order, each deadline in epoch ms. The queue is unchanged.
   * Throws a TypeError naming the first item whose value JSON cannot carry.
   */
  snapshot() {
    const tl = this.#tl;
    const d = tl.open();
    return writeSnapshot(d.sortedSlots(), d.sortedDeadlines(), tl.values, tl.clock);
  }

  /**
   * A new queue holding a snapshot's items: overdue ones first, all in deadline order,
   * FIFO among ties. `options` as for the constructor. A malformed snapshot, or a value
   * that snapshot() would refuse, throws and builds nothing.
   */
  static restore(snapshot, opts) {
    const queue = new DelayQueue(opts);
    const tl = queue.#tl;
    try {
      readSnapshot(snapshot, queue.#capacity, tl.clock, (value, deadline) => tl.offer(value, deadline));
    } catch (e) {
      queue.close();
      throw e;
    }
    return queue;
  }

  /** `for await (const item of queue)`: takes items as they expire, until the queue is closed. */
  async *[Symbol.asyncIterator]() {
    while (this.#tl.deadlines !== null) {
      let value;
      try {
        value = await this.take();
      } catch (e) {
        // Closed: the loop ends. Any other error (one that carries a value, a host refusing
        // the timer) reaches the loop, even if the queue closed after it was thrown.
        if (e instanceof ClosedError) return;
        throw e;
      }
      yield value;
    }
  }

  /**
   * Hands every overdue item to waiting takes now, without waiting for the timer (which a
   * hidden browser tab throttles). Called for every queue when a page becomes visible.
   */
  flush() {
    if (this.#tl.deadlines !== null) this.#serve(this.#tl.clock.now());
  }

  /** Rejects waiting takes and puts, disarms the timer and frees the wasm memory. Idempotent. */
  close() {
    if (!this.#tl.close()) return;
    live.delete(this.#ref);
    forgotten.unregister(this.#ref);
    this.#timed.clear();
    const error = new ClosedError("DelayQueue");
    for (const w of [...this.#takers.clear(), ...this.#putters.clear()]) {
      if (w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      w.reject(error);
    }
  }

  [dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "DelayQueue";
  }

  #onTimer() {
    const tl = this.#tl;
    if (tl.deadlines === null) return;
    const now = tl.clock.now();
    tl.deadlines.fired(now);
    this.#serve(now);
  }

  /** After a removal: room for waiting puts, and perhaps a later head for the timer. */
  #changed() {
    if (this.#putters.size !== 0 || this.#takers.size !== 0) this.#serve(this.#tl.clock.now());
  }

  /**
   * Hands items due by `now` to waiting takes in call order, ends timed-out takes, lets
   * waiting puts in as room appears, and re-arms the timer. A loop, not recursion, however
   * many wait. If the host refuses the timer, the waiting takes reject with its error
   * rather than wait for a wake-up that cannot come.
   */
  #serve(now) {
    const tl = this.#tl;
    const takers = this.#takers;
    for (;;) {
      let d = tl.deadlines;
      while (d !== null && takers.size !== 0) {
        const slot = d.takeDue(now);
        if (slot < 0) break;
        this.#hand(takers.shift(), tl.values.take(slot));
        d = tl.deadlines; // a then getter read while handing out may have closed the queue
      }
      if (d === null) return;
      for (let t = d.pollTimeout(now); t >= 0; t = d.pollTimeout(now)) {
        const taker = this.#timed.take(t);
        taker.timeout = 0; // already out of the binding
        this.#forget(taker);
        taker.resolve(undefined);
      }
      if (this.#putters.size === 0 || !this.#admit() || takers.size === 0) break;
    }
    try {
      tl.sync(takers.size !== 0);
    } catch (e) {
      for (const taker of takers.clear()) {
        this.#release(taker);
        taker.reject(e);
      }
    }
  }

  /**
   * Resolves a take with its item. A value that became a thenable after it was offered
   * would be adopted by the take's Promise and never reach it: the take rejects instead,
   * with a TypeError that carries the value (`error.value`).
   */
  #hand(taker, value) {
    this.#release(taker);
    const why = thenable(value);
    if (why === null) {
      taker.resolve(value);
    } else {
      const error = /** @type {TypeError & { value?: unknown }} */ (
        new TypeError(`the item taken became a thenable after it was offered (${why}); it is on this error's \`value\``)
      );
      error.value = value;
      taker.reject(error);
    }
  }

  /** Lets waiting puts in, in call order, while there is room; whether any got in. */
  #admit() {
    const tl = this.#tl;
    let admitted = false;
    for (let p = this.#putters.peek(); p !== undefined; p = this.#putters.peek()) {
      const h = tl.offer(p.value, p.deadline);
      if (h === null) break;
      this.#putters.remove(p);
      if (p.onAbort) p.signal.removeEventListener("abort", p.onAbort);
      p.resolve(h);
      admitted = true;
    }
    return admitted;
  }

  /** Takes a taker out of line and undoes its timeout and abort listener; false if it was not waiting. */
  #forget(taker) {
    if (!this.#takers.remove(taker)) return false;
    this.#release(taker);
    return true;
  }

  /** Undoes a taker's timeout and abort listener. */
  #release(taker) {
    if (taker.timeout !== 0) {
      this.#tl.deadlines?.cancelTimeout(taker.timeout);
      this.#timed.forget(taker.timeout);
      taker.timeout = 0;
    }
    if (taker.onAbort) taker.signal.removeEventListener("abort", taker.onAbort);
  }
}

/** Hands overdue items out in every live queue (for `visibilitychange`). */
export function flushAll() {
  for (const ref of live) {
    const q = ref.deref();
    if (q !== undefined) q.flush();
  }
}
