// The JS face of tarry's DelayQueue: values, waiting takes and puts, and the API people
// import. Ordering, handles and the one host timer live in the wasm core (src/binding.rs);
// this file keeps values in an array indexed by slot, so only numbers cross into wasm.

import { Core } from "./wasm.js";
import { readSnapshot, writeSnapshot } from "./snapshot.js";
import {
  checkBoolean,
  checkHandle,
  checkMs,
  checkSignal,
  checkValue,
  closedError as closed,
  describe,
  epochOf,
  options,
} from "./checks.js";
import { monotonicDeadline } from "./clock.js";

const closedError = () => closed("DelayQueue");

const dispose = Symbol.dispose ?? Symbol.for("Symbol.dispose");
const monotonicNow = () => performance.now();

/** Every live queue, so that a page becoming visible again can flush overdue items. */
const live = new Set();
const forgotten = new FinalizationRegistry((ref) => live.delete(ref));

/**
 * A delay queue: items come out in deadline order once their delay has expired.
 * See README.md for the API table and its mapping to java.util.concurrent.DelayQueue.
 */
export class DelayQueue {
  #core;
  /** values[slot] is the value of the live item in that slot. */
  #values = [];
  /** Waiting take() calls in call order (a Set keeps insertion order and deletes in O(1)). */
  #takers = new Set();
  /** takes with a timeout, by the slot of their timeout handle in the core. */
  #timed = [];
  /** Waiting put() calls in call order. */
  #putters = new Set();
  #capacity;
  #wake = () => this.#onTimer();
  #ref;

  /**
   * @param {{capacity?: number, keepAlive?: boolean}} [opts]
   */
  constructor(opts) {
    const { capacity = Infinity, keepAlive = true } = options(opts, "options");
    if (typeof capacity !== "number" || Number.isNaN(capacity))
      throw new TypeError(`capacity must be a number, got ${describe(capacity)}`);
    if (capacity !== Infinity && (!Number.isInteger(capacity) || capacity < 1 || capacity > 2 ** 31 - 1)) {
      throw new RangeError(`capacity must be a positive integer or Infinity, got ${capacity}`);
    }
    checkBoolean(keepAlive, "keepAlive");
    this.#capacity = capacity;
    this.#core = new Core(capacity === Infinity ? -1 : capacity, keepAlive);
    this.#ref = new WeakRef(this);
    live.add(this.#ref);
    forgotten.register(this, this.#ref, this.#ref);
  }

  /** Items in the queue, expired or not. */
  get size() {
    return this.#core ? this.#core.size : 0;
  }

  /** Room left before offer() returns null; Infinity when unbounded. */
  get remainingCapacity() {
    return this.#core ? this.#core.remainingCapacity : 0;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#core === null;
  }

  /**
   * Figures for monitoring: size, waiting takes, timers armed now (0 or 1), total arms,
   * wake-ups (and early ones, which re-arm), items handed to takes, and their lateness.
   */
  get stats() {
    if (!this.#core)
      return {
        size: 0,
        takers: 0,
        timersArmed: 0,
        timerArms: 0,
        wakes: 0,
        earlyWakes: 0,
        delivered: 0,
        latenessP50: 0,
        latenessP99: 0,
        latenessMax: 0,
      };
    return this.#core.stats();
  }

  /** Adds `value`, due `delayMs` from now. Returns its handle, or null when a bounded queue is full. */
  offer(value, delayMs) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    // Read the clock here rather than from wasm: a JS call to performance.now() is the
    // cheaper of the two, and the clock is most of an offer's cost.
    return this.#insert(value, monotonicNow() + delayMs, delayMs <= 0);
  }

  /**
   * Adds many items at once, `values[i]` due `delays[i]` ms from now (or all due `delays`
   * ms from now when it is one number), reading the clock once for the batch. Returns
   * their handles in order. Checks everything first: a bad value or delay, or a batch
   * larger than the room left, throws and adds nothing.
   */
  offerMany(values, delays) {
    if (!Array.isArray(values)) throw new TypeError(`values must be an array, got ${describe(values)}`);
    const n = values.length;
    let ds;
    if (typeof delays === "number") {
      checkMs(delays, "delays");
      ds = new Float64Array(n).fill(delays);
    } else if (Array.isArray(delays) || delays instanceof Float64Array) {
      if (delays.length !== n)
        throw new RangeError(`delays must have one delay per value: ${delays.length} delays for ${n} values`);
      for (let i = 0; i < n; i++) {
        const d = delays[i];
        if (typeof d !== "number" || d - d !== 0) checkMs(d, `delays[${i}]`);
      }
      ds = delays instanceof Float64Array ? delays : Float64Array.from(delays);
    } else {
      throw new TypeError(`delays must be a number, an array of numbers or a Float64Array, got ${describe(delays)}`);
    }
    for (let i = 0; i < n; i++) {
      if (values[i] === undefined || values[i] === null) throw new TypeError(`values[${i}] must not be ${values[i]}`);
    }
    const core = this.#open();
    if (n > core.remainingCapacity)
      throw new RangeError(`the batch of ${n} does not fit: room for ${core.remainingCapacity}`);
    const handles = core.offerMany(monotonicNow(), ds);
    const out = new Array(n);
    const stored = this.#values;
    for (let i = 0; i < n; i++) {
      const h = handles[i];
      stored[h >>> 0] = values[i];
      out[i] = h;
    }
    if (this.#takers.size !== 0) this.#deliver();
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
   * is converted once, now, to the monotonic clock: a later wall-clock jump changes nothing.
   * Equal wall-clock deadlines keep FIFO order.
   */
  offerAt(value, deadline) {
    checkValue(value);
    const at = monotonicDeadline(epochOf(deadline));
    return this.#insert(value, at, this.#takers.size !== 0 && at <= monotonicNow());
  }

  /** Inserts a checked value; `due` says it has already expired (and may serve a take now). */
  #insert(value, deadline, due) {
    const h = this.#open().offerAt(deadline);
    if (h < 0) return null;
    this.#values[h >>> 0] = value;
    if (due && this.#takers.size !== 0) this.#deliver();
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
    try {
      this.#open();
    } catch (e) {
      return Promise.reject(e);
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#putters.size === 0) {
      const h = this.offer(value, delayMs);
      if (h !== null) return Promise.resolve(h);
    }
    const deadline = monotonicNow() + delayMs;
    return new Promise((resolve, reject) => {
      const putter = { value, deadline, resolve, reject, signal, onAbort: null };
      if (signal) {
        putter.onAbort = () => {
          this.#putters.delete(putter);
          reject(signal.reason);
        };
        signal.addEventListener("abort", putter.onAbort, { once: true });
      }
      this.#putters.add(putter);
    });
  }

  /** The expired head, removed; undefined when nothing has expired. */
  poll() {
    const core = this.#open();
    const slot = core.poll();
    if (slot < 0) return undefined;
    const value = this.#values[slot];
    this.#values[slot] = undefined;
    if (this.#putters.size !== 0) this.#admitPutters();
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
    if (!this.#core) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#takers.size === 0) {
      // Nobody is ahead of this take: an expired head is its at once (and counts in
      // stats' lateness, like one the timer hands out). No timer is armed with no takers.
      const slot = this.#core.takeDue();
      if (slot >= 0) {
        const value = this.#values[slot];
        this.#values[slot] = undefined;
        if (this.#putters.size !== 0) this.#admitPutters();
        return Promise.resolve(value);
      }
    }
    return new Promise((resolve, reject) => {
      const taker = { resolve, reject, signal, onAbort: null, timeout: -1 };
      if (timeout !== undefined) {
        taker.timeout = this.#core.addTimeout(timeout);
        this.#timed[taker.timeout >>> 0] = taker;
      }
      if (signal) {
        taker.onAbort = () => {
          this.#forget(taker);
          this.#core?.setTakers(this.#takers.size, this.#wake);
          reject(signal.reason);
        };
        signal.addEventListener("abort", taker.onAbort, { once: true });
      }
      this.#takers.add(taker);
      this.#core.setTakers(this.#takers.size, this.#wake);
    });
  }

  /** The head, expired or not; undefined when empty. */
  peek() {
    const slot = this.#open().peekSlot();
    return slot < 0 ? undefined : this.#values[slot];
  }

  /** The head, expired or not; throws when empty. */
  element() {
    const slot = this.#open().peekSlot();
    if (slot < 0) throw new RangeError("element(): the DelayQueue is empty");
    return this.#values[slot];
  }

  /** Removes the item a handle names and returns its value; undefined for a stale or unknown handle. O(log n). */
  cancel(handle) {
    checkHandle(handle, "offer");
    const slot = this.#open().cancel(handle);
    if (slot < 0) return undefined;
    const value = this.#values[slot];
    this.#values[slot] = undefined;
    if (this.#putters.size !== 0) this.#admitPutters();
    return value;
  }

  /** Moves an item's deadline to `delayMs` from now; false for a stale or unknown handle. O(log n). */
  reschedule(handle, delayMs) {
    checkHandle(handle, "offer");
    checkMs(delayMs, "delayMs");
    const moved = this.#open().rescheduleAt(handle, monotonicNow() + delayMs);
    if (moved && delayMs <= 0 && this.#takers.size !== 0) this.#deliver();
    return moved;
  }

  /** Milliseconds until the item is due (negative when overdue); undefined for a stale or unknown handle. */
  delayOf(handle) {
    checkHandle(handle, "offer");
    const d = this.#open().delayOf(handle);
    return Number.isNaN(d) ? undefined : d;
  }

  /** Removes and returns up to `max` expired items, in expiry order. */
  drain(max = Infinity) {
    if (typeof max !== "number" || Number.isNaN(max)) throw new TypeError(`max must be a number, got ${describe(max)}`);
    if (max < 0 || (max !== Infinity && !Number.isInteger(max)))
      throw new RangeError(`max must be a non-negative integer or Infinity, got ${max}`);
    const slots = this.#open().drain(max);
    const values = this.#values;
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) {
      out[i] = values[slots[i]];
      values[slots[i]] = undefined;
    }
    if (out.length !== 0 && this.#putters.size !== 0) this.#admitPutters();
    return out;
  }

  /** Removes every item. Handles given out so far stay stale. */
  clear() {
    this.#open().clear();
    this.#values.fill(undefined);
    if (this.#putters.size !== 0) this.#admitPutters();
  }

  /** Every item in deadline order (FIFO among ties), without removing any. O(n log n). */
  toArray() {
    const slots = this.#open().sortedSlots();
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) out[i] = this.#values[slots[i]];
    return out;
  }

  /**
   * The pending items as plain, JSON-serialisable data: `{ version, size, items: [{ value,
   * deadline }] }` in deadline order, each deadline in epoch ms. The queue is unchanged.
   * Throws a TypeError naming the first item whose value JSON cannot carry.
   */
  snapshot() {
    const core = this.#open();
    return writeSnapshot(core.sortedSlots(), core.sortedDeadlines(), this.#values);
  }

  /**
   * A new queue holding a snapshot's items: overdue ones first, all in deadline order,
   * FIFO among ties. `options` as for the constructor. A malformed snapshot throws and
   * builds nothing.
   */
  static restore(snapshot, opts) {
    const queue = new DelayQueue(opts);
    const core = queue.#core;
    const values = queue.#values;
    try {
      readSnapshot(snapshot, queue.#capacity === Infinity ? -1 : queue.#capacity, (value, deadline) => {
        values[core.offerAt(deadline) >>> 0] = value;
      });
    } catch (e) {
      queue.close();
      throw e;
    }
    return queue;
  }

  /** `for await (const item of queue)`: takes items as they expire, until the queue is closed. */
  async *[Symbol.asyncIterator]() {
    while (this.#core) {
      let value;
      try {
        value = await this.take();
      } catch (e) {
        if (!this.#core) return;
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
    if (this.#core) this.#deliver();
  }

  /** Rejects waiting takes and puts, disarms the timer and frees the wasm memory. Idempotent. */
  close() {
    const core = this.#core;
    if (!core) return;
    this.#core = null;
    live.delete(this.#ref);
    forgotten.unregister(this.#ref);
    this.#values = [];
    this.#timed = [];
    const waiting = [...this.#takers, ...this.#putters];
    this.#takers.clear();
    this.#putters.clear();
    for (const w of waiting) {
      if (w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      w.reject(closedError());
    }
    core.free();
  }

  [dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "DelayQueue";
  }

  #open() {
    if (this.#core === null) throw closedError();
    return this.#core;
  }

  #onTimer() {
    if (this.#core === null) return;
    this.#core.fired();
    this.#deliver();
  }

  /** Hands expired items to takes in call order, expires timed-out takes, then re-arms. */
  #deliver() {
    const core = this.#core;
    const takers = this.#takers;
    const values = this.#values;
    while (takers.size !== 0) {
      const slot = core.takeDue();
      if (slot < 0) break;
      const taker = takers.values().next().value;
      this.#forget(taker);
      const value = values[slot];
      values[slot] = undefined;
      taker.resolve(value);
    }
    for (let slot = core.pollTimeout(); slot >= 0; slot = core.pollTimeout()) {
      const taker = this.#timed[slot];
      this.#timed[slot] = undefined;
      taker.timeout = -1; // already out of the core
      this.#forget(taker);
      taker.resolve(undefined);
    }
    if (this.#putters.size !== 0) this.#admitPutters();
    core.setTakers(takers.size, this.#wake);
  }

  /** Takes a taker out of the waiting set and undoes its timeout and abort listener. */
  #forget(taker) {
    this.#takers.delete(taker);
    if (taker.timeout >= 0) {
      this.#core?.cancelTimeout(taker.timeout);
      this.#timed[taker.timeout >>> 0] = undefined;
      taker.timeout = -1;
    }
    if (taker.onAbort) taker.signal.removeEventListener("abort", taker.onAbort);
  }

  #admitPutters() {
    const core = this.#core;
    let admitted = 0;
    for (const putter of this.#putters) {
      const h = core.offerAt(putter.deadline);
      if (h < 0) break;
      this.#values[h >>> 0] = putter.value;
      this.#putters.delete(putter);
      if (putter.onAbort) putter.signal.removeEventListener("abort", putter.onAbort);
      putter.resolve(h);
      admitted++;
    }
    if (admitted !== 0 && this.#takers.size !== 0) this.#deliver();
  }
}

/** Hands overdue items out in every live queue (for `visibilitychange`). */
export function flushAll() {
  for (const ref of live) {
    const q = ref.deref();
    if (q !== undefined) q.flush();
  }
}
