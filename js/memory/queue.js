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
// wasm (src/binding/ over the Rust core); the values in a JS array by slot (slots.js),
// so only numbers cross into wasm; the timer, the clock and both halves in a Timeline
// (timeline.js). This file holds what a DelayQueue adds: waiting takes and puts, served in
// call order, and the API.
//
// Guarantees: never early (on the queue's monotonic clock); exact order with FIFO ties;
// no lost items (an item leaves the queue only in the turn in which the take that gets it
// is resolved, so an aborted or timed-out take leaves it queued); O(log n) offer, cancel,
// reschedule and poll, O(1) peek.
//
// Events (an EventTarget, events.js): `delivered` as an item is handed out (take, poll,
// drain), with how late; `expired` once per item as its deadline passes while it is in the
// queue (at the latest just before it is handed out). Both are posted, dispatched in a
// microtask after the call that made them. Nobody listening costs one check per hand-out.
// While an `expired` listener is attached the timer also wakes for the earliest deadline not
// yet seen expired, and each such wake-up walks the items due: O(d log d) for d due items.

import { Emitter, POST } from "../engine/events.js";
import { Slots } from "./slots.js";
import { Timeline } from "./timeline.js";
import { Deadlines } from "../wasm.js";
import { Waiters } from "../engine/waiters.js";
import { readSnapshot, writeSnapshot } from "./snapshot.js";
import { ClosedError } from "../engine/errors.js";
import {
  abortReason,
  checkBoolean,
  checkCapacity,
  checkClock,
  checkHandle,
  checkId,
  checkIfExists,
  checkMs,
  checkSignal,
  checkTimeout,
  checkValue,
  describe,
  epochOf,
  IF_EXISTS,
  isRevoked,
  isValue,
  options,
  thenable,
} from "../engine/arguments.js";

const dispose = Symbol.dispose ?? Symbol.for("Symbol.dispose");

/** The options each call takes (arguments.js refuses any other, naming it). */
const QUEUE_OPTIONS = Object.freeze(["capacity", "keepAlive", "clock"]);
const TAKE_OPTIONS = Object.freeze(["signal", "timeout"]);
const PUT_OPTIONS = Object.freeze(["signal", "id", "ifExists"]);
const OFFER_OPTIONS = Object.freeze(["id", "ifExists"]);
const OFFER_MANY_OPTIONS = Object.freeze(["ids", "ifExists"]);

/** An offer without options: no id. */
const NO_ID = Object.freeze({ id: undefined, ifExists: IF_EXISTS[0] });

/** An offer's options bag, checked: { id (or undefined), ifExists }. */
function offerOptions(opts, of) {
  if (opts === undefined) return NO_ID;
  const o = options(opts, "options", OFFER_OPTIONS, of);
  const { id } = o;
  if (id !== undefined) checkId(id, "options.id");
  return { id, ifExists: checkIfExists(o.ifExists, "options.ifExists") };
}

/** What cancel, reschedule and delayOf take: a handle, or an id. */
function checkItem(item) {
  if (typeof item === "string") checkId(item, "id");
  else checkHandle(item, "offer", true);
}

/** offerMany's `{ ids, ifExists }`: `ids` undefined, or one id (or undefined) per value, each checked. */
function idsOption(opts, n) {
  const o = options(opts, "options", OFFER_MANY_OPTIONS, "offerMany()");
  const { ids } = o;
  const ifExists = checkIfExists(o.ifExists, "options.ifExists");
  if (ids === undefined) return { ids, ifExists };
  if (isRevoked(ids) || !Array.isArray(ids))
    throw new TypeError(`options.ids must be an array of ids (strings, or undefined for none), got ${describe(ids)}`);
  const m = ids.length;
  if (m !== n) throw new RangeError(`options.ids must have one id per value: ${m} ids for ${n} values`);
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (id !== undefined) checkId(id, `options.ids[${i}]`);
    out[i] = id;
  }
  return { ids: out, ifExists };
}

/** Every live queue, so that a page becoming visible again can flush overdue items. */
const live = new Set();
const forgotten = new FinalizationRegistry((ref) => live.delete(ref));

/**
 * A delay queue: items come out in deadline order once their delay has expired.
 * See README.md for the API table and its mapping to java.util.concurrent.DelayQueue.
 */
export class DelayQueue extends Emitter {
  #tl;
  /** Waiting take() calls, in call order. */
  #takers;
  /** Waiting put() calls, in call order. */
  #putters;
  /** Takes waiting with a timeout, by the handle of their timeout. */
  #timed = new Slots();
  #capacity;
  #ref;
  /** Whether a `delivered` listener is attached. */
  #delivering = false;

  /**
   * @param {{capacity?: number, keepAlive?: boolean, clock?: () => number}} [opts]
   */
  constructor(opts) {
    super((type, on) => this.#listening(type, on));
    const o = options(opts, "options", QUEUE_OPTIONS, "DelayQueue");
    const { capacity = Infinity, keepAlive = true, clock } = o;
    checkCapacity(capacity, Deadlines.maxItems());
    checkBoolean(keepAlive, "options.keepAlive");
    if (clock !== undefined) checkClock(clock);
    this.#capacity = capacity;
    // Waiting calls keep the process running (unless keepAlive is false), timer or not.
    this.#takers = new Waiters(keepAlive);
    this.#putters = new Waiters(keepAlive);
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

  /**
   * Adds `value`, due `delayMs` from now. Returns its handle, or null when a bounded queue
   * is full. With `{ id }`, the item is also named by that string, which `cancel`,
   * `reschedule` and `delayOf` take as they take its handle, and which snapshots keep.
   * `ifExists` says what an offer does when an item has the id already, and returns that
   * item's handle: "replace" (default): it gets the new value and deadline, as if offered
   * anew (behind the items already due then); "keep": it stays as it is; "extend": it gets
   * the new value, and the new deadline if that is later (moved as a replacement is), else
   * it keeps its deadline and place.
   */
  offer(value, delayMs, opts) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    const tl = this.#tl;
    // The plain offer (no id, no take waiting, no `expired` listener) needs none of
    // #insert's cases; kept this short, V8 inlines it whole, and the deadline never becomes
    // a heap-allocated number on its way into wasm.
    if (opts === undefined && this.#takers.size === 0 && !tl.watching) return tl.offer(value, tl.clock.now() + delayMs);
    const { id, ifExists } = offerOptions(opts, "offer()");
    return this.#offerChecked(value, delayMs, id, ifExists);
  }

  /** offer() of a value, delay, id and ifExists already checked (a value's check reads its `then` once). */
  #offerChecked(value, delayMs, id, ifExists) {
    const now = this.#tl.clock.now();
    return this.#insert(value, now + delayMs, now, id, ifExists);
  }

  /**
   * Adds many items at once, `values[i]` due `delays[i]` ms from now (or all due `delays`
   * ms from now when it is one number), reading the clock once for the batch. Returns
   * their handles in order. Each element is read once and checked first: a bad value or
   * delay, or a batch larger than the room left, throws and adds nothing. With
   * `{ ids, ifExists }`, `ids[i]` (a string, or undefined for none) names `values[i]` as
   * offer()'s `id` does, in order: an id already present, or repeated in the batch, meets
   * what is there as `ifExists` says (default "replace").
   */
  offerMany(values, delays, opts) {
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
    if (opts !== undefined) {
      const { ids, ifExists } = idsOption(opts, n);
      if (ids !== undefined) return this.#offerNamed(vs, ds, ids, ifExists);
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
    if (tl.watching) tl.expiryAt = -Infinity; // look at the next wake-up
    if (this.#takers.size !== 0) this.#serve(now);
    else if (tl.watching) this.#watch();
    return out;
  }

  /**
   * offerMany() with ids: one by one in batch order, on one clock reading, after checking
   * that the new ones fit (an id present needs no room, whatever `ifExists` does with it).
   */
  #offerNamed(vs, ds, ids, ifExists) {
    const tl = this.#tl;
    tl.open();
    const n = vs.length;
    const fresh = new Set();
    let added = 0;
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      if (id === undefined) added++;
      else if (!fresh.has(id) && tl.values.handleOf(id) === undefined) {
        fresh.add(id);
        added++;
      }
    }
    const room = tl.room();
    if (added > room) throw new RangeError(`the batch of ${added} new items does not fit: room for ${room}`);
    const now = tl.clock.now();
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const id = ids[i];
      const present = id === undefined ? undefined : tl.values.handleOf(id);
      if (present !== undefined) {
        tl.reoffer(present, vs[i], now + ds[i], ifExists);
        out[i] = present;
      } else {
        out[i] = tl.offer(vs[i], now + ds[i], id);
      }
    }
    if (this.#takers.size !== 0) this.#serve(now);
    else if (tl.watching) this.#watch();
    return out;
  }

  /** Like offer(), but throws a RangeError when a bounded queue is full. */
  add(value, delayMs, opts) {
    const h = this.offer(value, delayMs, opts);
    if (h === null) throw new RangeError(`the DelayQueue is full (capacity ${this.#capacity})`);
    return h;
  }

  /**
   * Adds `value` due at the wall-clock time `deadline` (epoch ms or a Date). The deadline
   * is converted once, now, to the queue's clock: never before it as the clocks stand now,
   * and a later wall-clock jump changes nothing. Equal wall-clock deadlines keep FIFO order.
   * `{ id }` as for offer().
   */
  offerAt(value, deadline, opts) {
    checkValue(value);
    const epoch = epochOf(deadline);
    const { id, ifExists } = offerOptions(opts, "offerAt()");
    const clock = this.#tl.clock;
    this.#tl.open();
    return this.#insert(value, clock.fromEpoch(epoch), clock.now(), id, ifExists);
  }

  /**
   * Inserts a checked value, named `id` if given. With takes waiting, a due item goes to
   * them now; a later one may re-arm the timer, and if the host refuses the timer the item
   * is taken back out and the error thrown (the offer changes nothing). An item that has
   * the id already meets the offer as `ifExists` says; one that moves moves as reschedule()
   * moves one (a host refusing the timer then rejects the waiting takes, as for reschedule).
   */
  #insert(value, deadline, now, id, ifExists) {
    const tl = this.#tl;
    if (id !== undefined) {
      const present = tl.values.handleOf(id);
      if (present !== undefined) {
        if (ifExists === "keep") return present;
        tl.reoffer(present, value, deadline, ifExists);
        if (this.#takers.size !== 0) this.#serve(now);
        else if (tl.watching) this.#watch();
        return present;
      }
    }
    const h = tl.offer(value, deadline, id);
    if (h !== null && this.#takers.size === 0) {
      if (tl.watching) this.#watch();
    } else if (h !== null) {
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
    try {
      return this.#put(value, delayMs, opts);
    } catch (e) {
      return Promise.reject(e); // a method that returns a Promise never throws: it rejects
    }
  }

  #put(value, delayMs, opts) {
    checkValue(value);
    checkMs(delayMs, "delayMs");
    const o = options(opts, "options", PUT_OPTIONS, "put()");
    const { signal, id } = o;
    checkSignal(signal, "options.signal");
    if (id !== undefined) checkId(id, "options.id");
    const ifExists = checkIfExists(o.ifExists, "options.ifExists");
    const tl = this.#tl;
    if (tl.deadlines === null) return Promise.reject(new ClosedError("DelayQueue"));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    // An id present needs no room: the offer meets it now, whoever waits for room.
    if (this.#putters.size === 0 || (id !== undefined && tl.values.handleOf(id) !== undefined)) {
      const h = this.#offerChecked(value, delayMs, id, ifExists);
      if (h !== null) return Promise.resolve(h);
    }
    const deadline = tl.clock.now() + delayMs;
    return new Promise((resolve, reject) => {
      const putter = {
        value,
        deadline,
        id,
        ifExists,
        resolve,
        reject,
        signal,
        onAbort: /** @type {(() => void) | null} */ (null),
      };
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
    const value = this.#delivering || tl.watching ? this.#takeOut(slot, tl.clock.now()) : tl.values.take(slot);
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
    try {
      return this.#take(opts);
    } catch (e) {
      return Promise.reject(e); // a method that returns a Promise never throws: it rejects
    }
  }

  #take(opts) {
    const { signal, timeout } = options(opts, "options", TAKE_OPTIONS, "take()");
    checkSignal(signal, "options.signal");
    checkTimeout(timeout);
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
          this.#hand(taker, this.#takeOut(slot, now));
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

  /**
   * Removes the item a handle or id names and returns its value; undefined for a stale or
   * unknown handle, or an id no item has. O(log n).
   */
  cancel(item) {
    checkItem(item);
    const h = this.#handleOf(item);
    const value = h === undefined ? undefined : this.#tl.cancel(h);
    if (value !== undefined) this.#changed();
    return value;
  }

  /** Moves an item's deadline (by handle or id) to `delayMs` from now; false when none is named. O(log n). */
  reschedule(item, delayMs) {
    checkItem(item);
    checkMs(delayMs, "delayMs");
    const h = this.#handleOf(item);
    if (h === undefined) return false;
    const tl = this.#tl;
    const now = tl.clock.now();
    const moved = tl.reschedule(h, now + delayMs);
    if (moved && this.#takers.size !== 0) this.#serve(now);
    else if (moved && tl.watching) this.#watch();
    return moved;
  }

  /** Milliseconds until the item (by handle or id) is due (negative when overdue); undefined when none is named. */
  delayOf(item) {
    checkItem(item);
    const h = this.#handleOf(item);
    return h === undefined ? undefined : this.#tl.delayOf(h);
  }

  /**
   * The handle a checked handle or id names: a handle as it is, or that of the item with
   * the id (undefined when none has it). Throws a ClosedError once closed.
   */
  #handleOf(item) {
    this.#tl.open();
    return typeof item === "string" ? this.#tl.values.handleOf(item) : item;
  }

  /** Removes and returns up to `max` expired items, in expiry order. */
  drain(max = Infinity) {
    if (typeof max !== "number") throw new TypeError(`max must be a number, got ${describe(max)}`);
    if (!(max >= 0) || (max !== Infinity && !Number.isInteger(max)))
      throw new RangeError(`max must be a non-negative integer or Infinity, got ${max}`);
    const tl = this.#tl;
    const d = tl.open();
    const now = tl.clock.now();
    let out;
    if (this.#telling) {
      // One item at a time, for each one's lateness.
      out = [];
      for (let slot = d.poll(now); slot >= 0 && out.length < max; ) {
        out.push(this.#takeOut(slot, now));
        if (out.length < max) slot = d.poll(now);
      }
    } else {
      const slots = d.drain(now, max);
      const values = tl.values;
      out = new Array(slots.length);
      for (let i = 0; i < slots.length; i++) out[i] = values.take(slots[i]);
    }
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
      readSnapshot(snapshot, queue.#capacity, tl.clock, (value, deadline, id) => tl.offer(value, deadline, id));
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
    if (tl.watching && now >= tl.expiryAt) this.#seeExpired(now);
    this.#serve(now);
  }

  /** Whether anyone hears `delivered` or `expired` (then hand-outs go through #takeOut): two field reads. */
  get #telling() {
    return this.#delivering || this.#tl.watching;
  }

  /**
   * The value in a slot the binding just handed out at `now`, taken from the slot table,
   * with its events posted: `expired` first if it was not seen expired yet, then `delivered`.
   */
  #takeOut(slot, now) {
    const tl = this.#tl;
    const values = tl.values;
    if (tl.watching && !values.marked(slot)) this[POST]("expired", { id: values.idOf(slot), value: values.get(slot) });
    if (this.#delivering) {
      const lateness = Math.max(0, now - /** @type {Deadlines} */ (tl.deadlines).lastDeadline);
      this[POST]("delivered", { id: values.idOf(slot), value: values.get(slot), lateness });
    }
    return values.take(slot);
  }

  /** Posts `expired` for each item due by `now` not seen expired yet, and notes when to look again. */
  #seeExpired(now) {
    const tl = this.#tl;
    const d = /** @type {Deadlines} */ (tl.deadlines);
    const values = tl.values;
    const slots = d.expiredSlots(now);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      if (values.marked(slot)) continue;
      values.mark(slot);
      this[POST]("expired", { id: values.idOf(slot), value: values.get(slot) });
    }
    tl.expiryAt = d.nextAfterExpired;
  }

  /** Re-arms the timer for what `expired` waits for, when no take waits (a refusal waits for the next change). */
  #watch() {
    try {
      this.#tl.sync(false);
    } catch {
      // The host refused the timer: the next change re-arms it.
    }
  }

  /** The first `expired` listener makes the timer wake for deadlines; the last one leaving stops it. */
  #listening(type, on) {
    if (type === "delivered") this.#delivering = on;
    if (type !== "expired") return;
    const tl = this.#tl;
    tl.watching = on;
    tl.expiryAt = on ? -Infinity : Infinity;
    if (tl.deadlines === null) return;
    try {
      tl.sync(this.#takers.size !== 0);
    } catch {
      // The host refused the timer: the next change re-arms it.
    }
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
        this.#hand(takers.shift(), this.#telling ? this.#takeOut(slot, now) : tl.values.take(slot));
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
      // Its id may have been given to an item since it began to wait: the put meets that one.
      const present = p.id === undefined ? undefined : tl.values.handleOf(p.id);
      if (present !== undefined) tl.reoffer(present, p.value, p.deadline, p.ifExists);
      const h = present ?? tl.offer(p.value, p.deadline, p.id);
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
