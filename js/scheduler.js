// Scheduler: callbacks run once at their deadline, like setTimeout, on one host timer.
//
// The same wasm core as DelayQueue orders the callbacks (deadline, then FIFO among ties)
// and arms the single host timer for the earliest one. A wake-up runs, in deadline order,
// the callbacks that were due when it began; one scheduled meanwhile for "now" waits for
// the next wake-up, so a callback that reschedules itself at delay 0 cannot starve the
// event loop. A callback that throws or rejects does not stop the others: the error goes
// to `onerror` (console.error by default). A long callback delays the ones after it but
// never reorders them.
//
// Costs: schedule, cancel and reschedule O(log n); ~32 bytes per pending callback in wasm
// plus the callback record, against ~150–490 bytes for a pending setTimeout in Node.

import { Core } from "./wasm.js";
import { checkBoolean, checkHandle, checkMs, closedError as closed, describe, epochOf, options } from "./checks.js";
import { monotonicDeadline } from "./clock.js";

const dispose = Symbol.dispose ?? Symbol.for("Symbol.dispose");

const closedError = () => closed("Scheduler");

function checkFn(fn) {
  if (typeof fn !== "function") throw new TypeError(`callback must be a function, got ${describe(fn)}`);
}

function report(error) {
  console.error("tarry Scheduler: a callback failed:", error);
}

/**
 * Runs callbacks at their deadlines, in deadline order, with one host timer for all.
 *
 * @example
 * const s = new Scheduler();
 * s.schedule((name) => console.log(`hello ${name}`), 100, "ada");
 */
export class Scheduler {
  #core;
  /** jobs[slot] is the pending callback in that slot: { fn, args, handle }. */
  #jobs = [];
  /** Whether the core holds our wake function (exactly while callbacks are pending). */
  #waiting = false;
  #wake = () => this.#onTimer();
  /** Counts wake-ups; a callback scheduled during one is stamped with its number. */
  #wakeNo = 0;
  #inWake = false;

  /**
   * Called with the error when a callback throws or its promise rejects; `console.error`
   * when null. Its own errors go to console.error.
   * @type {((error: unknown) => void) | null}
   */
  onerror = null;

  /**
   * @param {{keepAlive?: boolean, onerror?: (error: unknown) => void}} [opts]
   * keepAlive false: pending callbacks do not hold a Node or Deno process open.
   */
  constructor(opts) {
    const { keepAlive = true, onerror = null } = options(opts, "options");
    checkBoolean(keepAlive, "keepAlive");
    if (onerror !== null && typeof onerror !== "function")
      throw new TypeError(`onerror must be a function, got ${describe(onerror)}`);
    this.onerror = onerror;
    this.#core = new Core(-1, keepAlive);
  }

  /** Callbacks waiting to run. */
  get size() {
    return this.#core ? this.#core.size : 0;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#core === null;
  }

  /** Figures for monitoring, as DelayQueue's `stats` (`delivered` counts callbacks run). */
  get stats() {
    return this.#open().stats();
  }

  /** Runs `fn(...args)` once, `delayMs` from now. Returns a handle for cancel and reschedule. */
  schedule(fn, delayMs, ...args) {
    checkFn(fn);
    checkMs(delayMs, "delayMs");
    const core = this.#open();
    return this.#add(core, core.offerAt(performance.now() + delayMs), fn, args);
  }

  /**
   * Runs `fn(...args)` once at the wall-clock time `deadline` (epoch ms or a Date). The
   * deadline is converted once, now, to the monotonic clock.
   */
  scheduleAt(fn, deadline, ...args) {
    checkFn(fn);
    const at = monotonicDeadline(epochOf(deadline));
    const core = this.#open();
    return this.#add(core, core.offerAt(at), fn, args);
  }

  /** Forgets a pending callback; false when the handle names none (it ran, or was cancelled). */
  cancel(handle) {
    checkHandle(handle, "schedule");
    const core = this.#open();
    const slot = core.cancel(handle);
    if (slot < 0) return false;
    this.#jobs[slot] = undefined;
    this.#sync(core);
    return true;
  }

  /** Moves a pending callback to `delayMs` from now; false when the handle names none. */
  reschedule(handle, delayMs) {
    checkHandle(handle, "schedule");
    checkMs(delayMs, "delayMs");
    return this.#open().rescheduleAt(handle, performance.now() + delayMs);
  }

  /** Milliseconds until a pending callback runs (negative when overdue); undefined when none. */
  delayOf(handle) {
    checkHandle(handle, "schedule");
    const d = this.#open().delayOf(handle);
    return Number.isNaN(d) ? undefined : d;
  }

  /** Drops every pending callback, disarms the timer and frees the wasm memory. Idempotent. */
  close() {
    const core = this.#core;
    if (!core) return;
    this.#core = null;
    this.#jobs = [];
    core.free();
  }

  [dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "Scheduler";
  }

  #open() {
    if (this.#core === null) throw closedError();
    return this.#core;
  }

  #add(core, handle, fn, args) {
    // The core refuses only non-finite delays, which the checks above already rule out.
    this.#jobs[handle >>> 0] = { fn, args, handle, wake: this.#inWake ? this.#wakeNo : -1 };
    if (!this.#waiting) this.#sync(core);
    return handle;
  }

  /** Holds the timer exactly while callbacks are pending (the core arms it for the head). */
  #sync(core) {
    const waiting = core.size !== 0;
    if (waiting !== this.#waiting) {
      this.#waiting = waiting;
      core.setTakers(waiting ? 1 : 0, this.#wake);
    }
  }

  #onTimer() {
    let core = this.#core;
    if (core === null) return;
    core.fired();
    // Run what was due when this wake-up began. A callback scheduled during it waits for
    // the next one, even at delay 0: it is the head then, so nothing after it runs first.
    const now = performance.now();
    const wakeNo = ++this.#wakeNo;
    const jobs = this.#jobs;
    this.#inWake = true;
    try {
      for (;;) {
        const head = core.peekSlot();
        if (head < 0) break;
        const next = jobs[head];
        if (next.wake === wakeNo || !(core.deadlineOf(next.handle) <= now)) break;
        const slot = core.takeDue();
        if (slot < 0) break;
        const job = jobs[slot];
        jobs[slot] = undefined;
        this.#run(job);
        core = this.#core;
        if (core === null) return; // a callback closed the scheduler
      }
    } finally {
      this.#inWake = false;
    }
    // Let go of the wake function when nothing is pending, else re-arm for the new head.
    this.#sync(core);
    core.settle();
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
