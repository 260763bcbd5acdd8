// Scheduler: callbacks run once at their deadline, like setTimeout, on one host timer.
//
// The callbacks are the items of a Timeline (timeline.js), as a DelayQueue's values are:
// the wasm half orders them (deadline, then FIFO among ties) and says when the one timer
// should fire; something always waits on a scheduler, so the timer is armed exactly while
// callbacks are pending. A wake-up runs, in deadline order, the callbacks that were due
// when it began; one scheduled meanwhile is due after that moment, even at delay 0, so it
// waits for the next wake-up and a callback that reschedules itself cannot starve the
// event loop. A callback that throws or rejects does not stop the others: the error goes
// to `onerror` (console.error by default). A long callback delays the ones after it but
// never reorders them.
//
// Costs: schedule, cancel and reschedule O(log n); per pending callback a 24-byte record
// in wasm and the callback's own record in JS, where a pending setTimeout costs a few
// hundred bytes in Node (README ## Performance measures both).

import { Timeline } from "./timeline.js";
import { checkBoolean, checkClock, checkHandle, checkMs, describe, epochOf, options } from "./arguments.js";

const dispose = Symbol.dispose ?? Symbol.for("Symbol.dispose");

function checkFn(fn) {
  if (typeof fn !== "function") throw new TypeError(`callback must be a function, got ${describe(fn)}`);
}

function report(error) {
  console.error("tarry Scheduler: a callback failed:", error);
}

/** The smallest time after `t`. */
function after(t) {
  return t + Math.max(Math.abs(t) * Number.EPSILON, Number.MIN_VALUE);
}

/**
 * Runs callbacks at their deadlines, in deadline order, with one host timer for all.
 *
 * @example
 * const s = new Scheduler();
 * s.schedule((name) => console.log(`hello ${name}`), 100, "ada");
 */
export class Scheduler {
  #tl;
  /** While a wake-up runs, the time it began; NaN otherwise. */
  #wakeStart = NaN;

  /**
   * Called with the error when a callback throws or its promise rejects; `console.error`
   * when null. Its own errors go to console.error.
   * @type {((error: unknown) => void) | null}
   */
  onerror = null;

  /**
   * @param {{keepAlive?: boolean, onerror?: ((error: unknown) => void) | null, clock?: () => number}} [opts]
   * keepAlive false: pending callbacks do not hold a Node or Deno process open.
   */
  constructor(opts) {
    const { keepAlive = true, onerror = null, clock } = options(opts, "options");
    checkBoolean(keepAlive, "keepAlive");
    if (onerror !== null && typeof onerror !== "function")
      throw new TypeError(`onerror must be a function, got ${describe(onerror)}`);
    if (clock !== undefined) checkClock(clock);
    this.onerror = onerror;
    this.#tl = new Timeline("Scheduler", Infinity, keepAlive, clock, () => this.#onTimer());
  }

  /** Callbacks waiting to run. */
  get size() {
    return this.#tl.size;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#tl.deadlines === null;
  }

  /** Figures for monitoring, as DelayQueue's `stats` (`delivered` counts callbacks run). */
  get stats() {
    return this.#tl.stats(0);
  }

  /** Runs `fn(...args)` once, `delayMs` from now. Returns a handle for cancel and reschedule. */
  schedule(fn, delayMs, ...args) {
    checkFn(fn);
    checkMs(delayMs, "delayMs");
    const tl = this.#tl;
    tl.open();
    return this.#add({ fn, args }, tl.clock.now() + delayMs);
  }

  /**
   * Runs `fn(...args)` once at the wall-clock time `deadline` (epoch ms or a Date). The
   * deadline is converted once, now, to the scheduler's clock.
   */
  scheduleAt(fn, deadline, ...args) {
    checkFn(fn);
    const epoch = epochOf(deadline);
    const tl = this.#tl;
    tl.open();
    return this.#add({ fn, args }, tl.clock.fromEpoch(epoch));
  }

  /** Forgets a pending callback; false when the handle names none (it ran, or was cancelled). */
  cancel(handle) {
    checkHandle(handle, "schedule");
    if (this.#tl.cancel(handle) === undefined) return false;
    this.#rearm();
    return true;
  }

  /** Moves a pending callback to `delayMs` from now; false when the handle names none. */
  reschedule(handle, delayMs) {
    checkHandle(handle, "schedule");
    checkMs(delayMs, "delayMs");
    const tl = this.#tl;
    const moved = tl.open().reschedule(handle, this.#notThisWake(tl.clock.now() + delayMs));
    if (moved) this.#rearm();
    return moved;
  }

  /** Milliseconds until a pending callback runs (negative when overdue); undefined when none. */
  delayOf(handle) {
    checkHandle(handle, "schedule");
    return this.#tl.delayOf(handle);
  }

  /** Drops every pending callback, disarms the timer and frees the wasm memory. Idempotent. */
  close() {
    this.#tl.close();
  }

  [dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "Scheduler";
  }

  /** Adds a job; if the host refuses the timer, takes it back out and throws (nothing changed). */
  #add(job, deadline) {
    const tl = this.#tl;
    const h = tl.offer(job, this.#notThisWake(deadline));
    try {
      tl.armFor(h);
    } catch (e) {
      this.#rearm(); // the callbacks already pending need the timer back
      throw e;
    }
    return h;
  }

  /** During a wake-up, a deadline no earlier than just after it began. */
  #notThisWake(deadline) {
    const start = this.#wakeStart;
    return deadline > start || Number.isNaN(start) ? deadline : after(start);
  }

  /** Re-arms for the new head; a host refusing the timer goes to onerror (the next change re-arms). */
  #rearm() {
    const tl = this.#tl;
    if (tl.deadlines === null) return;
    try {
      tl.sync(true);
    } catch (e) {
      this.#fail(e);
    }
  }

  #onTimer() {
    const tl = this.#tl;
    let d = tl.deadlines;
    if (d === null) return;
    const now = tl.clock.now();
    d.fired(now);
    // Run what was due when this wake-up began, in order.
    this.#wakeStart = now;
    try {
      for (let slot = d.takeDue(now); slot >= 0; slot = d.takeDue(now)) {
        this.#run(tl.values.take(slot));
        d = tl.deadlines;
        if (d === null) return; // a callback closed the scheduler
      }
    } finally {
      this.#wakeStart = NaN;
    }
    this.#rearm();
  }

  #run(job) {
    try {
      const result = job.fn(...job.args);
      if (result !== null && typeof result === "object" && typeof result.then === "function") {
        result.then(undefined, (e) => this.#fail(e));
      }
    } catch (e) {
      this.#fail(e);
    }
  }

  #fail(error) {
    const handler = this.onerror;
    if (typeof handler !== "function") return report(error);
    try {
      handler.call(this, error);
    } catch (e) {
      report(e);
    }
  }
}
