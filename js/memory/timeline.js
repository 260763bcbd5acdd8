// Timeline: the items of one DelayQueue or Scheduler on its clock, and what both need to
// keep them: the deadlines in wasm (`Deadlines`, src/binding/mod.rs: order, handles, when the
// timer should fire), the values in a slot table (slots.js), the one host timer (timer.js)
// and the clock (clock.js). Offering, cancelling and rescheduling by handle, the figures,
// and closing are written here once for both.

import { Clock } from "./clock.js";
import { ClosedError } from "../engine/errors.js";
import { Slots } from "./slots.js";
import { Timer } from "../engine/timer.js";
import { Deadlines, Refused } from "../wasm.js";

/** What `stats` shows once closed. */
const CLOSED_STATS = Object.freeze({
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
});

export class Timeline {
  /** The wasm half; null once closed. @type {Deadlines | null} */
  deadlines;
  values = new Slots();
  clock;
  timer;
  /**
   * Whether a DelayQueue's `expired` events are heard; then `expiryAt` is the earliest
   * deadline of an item not yet seen expired (-Infinity: look at the next wake-up), and the
   * timer wakes for it too. Infinity while not watching.
   */
  watching = false;
  expiryAt = Infinity;
  #what;
  #bounded;

  /**
   * @param {string} what the owner's class name, for messages
   * @param {number} capacity checked by the caller (Infinity: unbounded)
   * @param {boolean} keepAlive
   * @param {(() => number) | undefined} clock
   * @param {() => void} onWake called when the timer fires
   */
  constructor(what, capacity, keepAlive, clock, onWake) {
    this.#what = what;
    this.#bounded = capacity !== Infinity;
    this.clock = new Clock(clock);
    this.timer = new Timer(this.clock, keepAlive, onWake);
    this.deadlines = new Deadlines(capacity);
  }

  /** The wasm half; throws a ClosedError once closed. */
  open() {
    const d = this.deadlines;
    if (d === null) throw new ClosedError(this.#what);
    return d;
  }

  get size() {
    return this.deadlines === null ? 0 : this.deadlines.size;
  }

  /** How many more items fit: the room left in a bounded queue, or up to `maxItems`. */
  room() {
    const d = this.open();
    return this.#bounded ? d.remainingCapacity : Deadlines.maxItems() - d.size;
  }

  /**
   * Adds a checked value due at `deadline`, named `id` if given (a checked id that no item
   * has); its handle, or null when a bounded queue is full.
   */
  offer(value, deadline, id) {
    const h = this.open().offer(deadline);
    if (h < 0) return this.#refused(h);
    this.values.put(h, value);
    if (id !== undefined) this.values.name(h, id);
    if (this.watching && deadline < this.expiryAt) this.expiryAt = deadline;
    return h;
  }

  /**
   * Gives the live item `handle` a new value and deadline, as if offered anew (behind the
   * items already due at that deadline); it keeps its handle and id. Arms nothing.
   */
  replace(handle, value, deadline) {
    this.open().reschedule(handle, deadline);
    this.values.put(handle, value);
    if (this.watching && deadline < this.expiryAt) this.expiryAt = deadline;
  }

  /**
   * Gives the live item `handle` a new value, and `deadline` if that is later than its own
   * (moved as replace() moves it); otherwise it keeps its deadline, its place among equal
   * deadlines and whether it was seen expired. Arms nothing.
   */
  extend(handle, value, deadline) {
    if (this.open().extend(handle, deadline)) {
      this.values.put(handle, value);
      if (this.watching && deadline < this.expiryAt) this.expiryAt = deadline;
    } else {
      this.values.revalue(handle, value);
    }
  }

  /**
   * An offer of `value` due at `deadline` meeting the live item `handle`, which has the
   * offer's id, as `ifExists` says: "replace" (replace()), "extend" (extend()) or "keep"
   * (nothing changes). Arms nothing.
   */
  reoffer(handle, value, deadline, ifExists) {
    if (ifExists === "replace") this.replace(handle, value, deadline);
    else if (ifExists === "extend") this.extend(handle, value, deadline);
  }

  /** Moves the live item `handle` to `deadline`; false when it names none. Arms nothing. */
  reschedule(handle, deadline) {
    const moved = this.open().reschedule(handle, deadline);
    if (moved && this.watching) {
      this.values.unmark(handle);
      if (deadline < this.expiryAt) this.expiryAt = deadline;
    }
    return moved;
  }

  #refused(refusal) {
    if (refusal === Refused.Full) {
      if (this.#bounded) return null;
      throw new RangeError(`the ${this.#what} holds ${Deadlines.maxItems()} items, the most a queue holds`);
    }
    throw new RangeError(`a deadline must be a finite number of milliseconds`);
  }

  /** Removes an item; its value, or undefined when the handle names nothing here. */
  cancel(handle) {
    const d = this.deadlines ?? this.open();
    return d.cancel(handle) ? this.values.forget(handle) : undefined;
  }

  /** Milliseconds until an item is due (negative when overdue), or undefined. */
  delayOf(handle) {
    const deadline = this.open().deadlineOf(handle);
    return Number.isNaN(deadline) ? undefined : deadline - this.clock.now();
  }

  /** Arms the timer for the earliest deadline that can end a wait, or disarms it. */
  sync(waiting) {
    this.timer.set(Math.min(/** @type {Deadlines} */ (this.deadlines).wakeAt(waiting), this.expiryAt));
  }

  /**
   * After offering `handle` for something that waits: arms the timer for the new earliest
   * deadline. If the host refuses the timer, takes the item back out and throws, so that
   * the offer changes nothing.
   */
  armFor(handle) {
    try {
      this.sync(true);
    } catch (e) {
      this.cancel(handle);
      throw e;
    }
  }

  /** Figures for monitoring; zeros once closed. */
  stats(takers) {
    const d = this.deadlines;
    if (d === null) return { ...CLOSED_STATS };
    // In the order Deadlines#figures gives them.
    const [wakes, earlyWakes, delivered, latenessP50, latenessP99, latenessMax] = d.figures();
    return {
      size: d.size,
      takers,
      timersArmed: this.timer.armed ? 1 : 0,
      timerArms: this.timer.arms,
      wakes,
      earlyWakes,
      delivered,
      latenessP50,
      latenessP99,
      latenessMax,
    };
  }

  /** Disarms the timer and frees the wasm memory; false if it was closed already. */
  close() {
    const d = this.deadlines;
    if (d === null) return false;
    this.deadlines = null;
    this.timer.disarm();
    this.values.clear();
    d.free();
    return true;
  }
}
