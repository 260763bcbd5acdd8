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
// Recurring schedules (`every`, `cron`) are items too: each active schedule has exactly one
// pending item, for its next occurrence, on the same timeline and the same one timer. An
// occurrence is a wall-clock instant (epoch ms; rules in schedule/rule.js), converted to
// the scheduler's monotonic clock erring late; the wake-up that reaches it runs it only
// once Date.now() says it is due (a wall clock stepped back re-arms instead: never early).
// A wall clock that steps forward, or a monotonic clock that paused while the machine
// slept, shows as a change in the offset between the two clocks: while any schedule is
// active, one take-timeout on the same timeline re-reads that offset every second
// (WALL_CHECK_MS) and re-converts every schedule's deadline when it moved, so such a
// change makes an occurrence at most about a second late, and a schedule that fell behind
// gets the catchUp it asked for.
//
// A schedule's controls are every engine's (docs/schedules.md, checks in schedule/spec.js):
// a name (`id`), `maxRuns` and `stopAt` (reached, the schedule ends), `trigger()` (one
// extra run now, counted, refused while a run lasts with overlap false) and `nextRuns(n)`
// (from the rule, O(n)). pause() keeps the pending occurrence's due time; resume() places it
// again, and catchUp decides when it came due meanwhile.
//
// Costs: schedule, cancel and reschedule O(log n); per pending callback a 24-byte record
// in wasm and the callback's own record in JS, where a pending setTimeout costs a few
// hundred bytes in Node (README ## Performance measures both). An occurrence costs its
// rule's `next` (O(1) for every; croner's walk for cron) and O(log n); the wall-clock
// check O(1) a second, and O(s log n) for s schedules when the clocks moved apart.
//
// Events (an EventTarget, events.js), posted in a microtask after the wake-up that made them:
// `delivered` { lateness } as a one-off callback runs; `occurrence` { schedule, due,
// lateness } as a schedule's occurrence runs; `skipped` { schedule, due, reason } when one
// does not: "overlap" (the previous run was still running) or "missed" (the schedule fell
// behind and its catchUp skips occurrences: one event, `due` the first one skipped).
// Nobody listening costs one check per callback.

import { Emitter, HEARD, POST } from "../engine/events.js";
import { Timeline } from "./timeline.js";
import { checkBoolean, checkClock, checkHandle, checkMs, describe, instantOf, options } from "../engine/arguments.js";
import { checkNextRuns, checkScheduleId, limitsOf, nextRunsOf, stopAtBefore } from "../schedule/spec.js";
import {
  catchUp,
  checkCatchUp,
  defaultStart,
  EveryRule,
  checkPeriod,
  firstOccurrence,
  knownOptions,
  startOf,
} from "../schedule/rule.js";

/** How often, while a schedule is active, the offset between the wall and monotonic clocks is re-read. */
const WALL_CHECK_MS = 1000;
/** A change of that offset by more than this (ms) re-converts the schedules' deadlines. */
const WALL_STEP_MS = 2;
/** What a schedule's options may name. */
const EVERY_OPTIONS = ["id", "catchUp", "overlap", "start", "maxRuns", "stopAt"];
const CRON_OPTIONS = ["timezone", ...EVERY_OPTIONS];
/** Lets only the Scheduler make Schedules. */
const secret = Symbol("Schedule");

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

/** A thenable's `then`, or null (reads `then` once; a getter that throws counts as none). */
function thenOf(x) {
  if ((typeof x !== "object" && typeof x !== "function") || x === null) return null;
  try {
    const then = x.then;
    return typeof then === "function" ? then : null;
  } catch {
    return null;
  }
}

/** The state of one recurring schedule, shared by its Scheduler and its Schedule. */
class Recurrence {
  /** @type {{next(after: number): number | undefined, latest(at: number): number | undefined}} */
  rule;
  fn;
  catchUp;
  overlap;
  /** The pending occurrence (epoch ms); undefined when none is pending. */
  due = undefined;
  /** The timeline item of the pending occurrence; 0 when none. */
  handle = 0;
  /** @type {"active" | "paused" | "cancelled" | "ended"} */
  state = "active";
  /** Runs whose promise has not settled yet. */
  running = 0;
  runs = 0;
  skipped = 0;
  /** The due time of the latest run (epoch ms), or undefined. */
  lastRun = undefined;
  /** When the latest run began (Date.now()). */
  began = Number.NEGATIVE_INFINITY;
  /** Whether the pending occurrence (due, no item) waits for the running run to end (overlap false, catchUp "all"). */
  waiting = false;
  /** @type {Schedule} */
  schedule;
  /** @type {{ maxRuns: number | undefined, stopAt: number | undefined }} */
  limits;

  constructor(rule, fn, catchUp, overlap, limits) {
    this.rule = rule;
    this.fn = fn;
    this.catchUp = catchUp;
    this.overlap = overlap;
    this.limits = limits;
  }
}

let nextScheduleId = 1;

/**
 * A recurring schedule of a Scheduler, as `every()` and `cron()` return it: its next run,
 * its counters, and cancel/pause/resume.
 */
export class Schedule {
  /** Its name: the `id` option, or one unique in this process ("schedule-1", ...). */
  id;
  #r;
  #host;

  /** Made by Scheduler#every and Scheduler#cron only. */
  constructor(token, r, host, id) {
    if (token !== secret) throw new TypeError("a Schedule is made by Scheduler#every() or Scheduler#cron()");
    this.id = id ?? `schedule-${nextScheduleId++}`;
    this.#r = r;
    this.#host = host;
  }

  /** When the next occurrence is due, or undefined when none will run (paused, cancelled or ended). */
  nextRun() {
    const r = this.#r;
    return r.state === "active" && r.due !== undefined ? new Date(r.due) : undefined;
  }

  /** "active", "paused", "cancelled" (by cancel()) or "ended" (the rule has no more occurrences, maxRuns or stopAt was reached, or the scheduler was closed). */
  get state() {
    return this.#r.state;
  }

  /** Occurrences run so far. */
  get runs() {
    return this.#r.runs;
  }

  /** Occurrences skipped because the previous run was still running (overlap: false). */
  get skipped() {
    return this.#r.skipped;
  }

  /** The due time of the latest occurrence run, or undefined. */
  get lastRun() {
    const t = this.#r.lastRun;
    return t === undefined ? undefined : new Date(t);
  }

  /** Stops the schedule for good (a run in progress finishes); false when it was cancelled or ended already. */
  cancel() {
    return this.#host.cancel(this.#r);
  }

  /** Stops running occurrences until resume(); false when it was not active. */
  pause() {
    return this.#host.pause(this.#r);
  }

  /**
   * Runs occurrences again: the one pending when it was paused comes back, and if it was
   * due meanwhile, catchUp decides what runs ("one": the latest missed one, at once; "all":
   * each; "none": none, the next on time), as on every engine; false when it was not paused.
   */
  resume() {
    return this.#host.resume(this.#r);
  }

  /** One extra run now (Scheduler#trigger): true when it ran. */
  trigger() {
    return this.#host.trigger(this.#r);
  }

  /** The next `n` occurrences as Dates (Scheduler#nextRuns). */
  nextRuns(n) {
    return this.#host.nextRuns(this.#r, n);
  }

  get [Symbol.toStringTag]() {
    return "Schedule";
  }
}

/**
 * Runs callbacks at their deadlines, in deadline order, with one host timer for all, and
 * recurring schedules (`every`, `cron`) on the same timer.
 *
 * @example
 * const s = new Scheduler();
 * s.schedule((name) => console.log(`hello ${name}`), 100, "ada");
 * s.every(60_000, (due) => console.log("a minute passed", due));
 */
export class Scheduler extends Emitter {
  #tl;
  /** While a wake-up runs, the time it began; NaN otherwise. */
  #wakeStart = NaN;
  /** The cron rule maker (tarry-queue/cron's `cron`), or null. */
  #cron;
  /** Schedules that are active or paused. */
  #schedules = new Set();
  /** The same, by id. */
  #byId = new Map();
  /** Active schedules (each has its one pending item). */
  #active = new Set();
  /** The take-timeout that re-reads the clocks' offset while a schedule is active; 0 when none. */
  #watch = 0;
  /** Epoch ms minus the clock, as used for the active schedules' deadlines (a low bound). */
  #offset = NaN;
  /** What Schedules call back into. */
  #host = {
    cancel: (r) => this.#cancelSchedule(r),
    pause: (r) => this.#pauseSchedule(r),
    resume: (r) => this.#resumeSchedule(r),
    trigger: (r) => this.#trigger(r),
    nextRuns: (r, n) => this.#nextRuns(r, n),
  };

  /**
   * Called with the error when a callback throws or its promise rejects; `console.error`
   * when null. Its own errors go to console.error.
   * @type {((error: unknown) => void) | null}
   */
  onerror = null;

  /**
   * @param {{keepAlive?: boolean, onerror?: ((error: unknown) => void) | null, clock?: () => number, cron?: Function | null}} [opts]
   * keepAlive false: pending callbacks do not hold a Node or Deno process open. `cron`:
   * the `cron` export of tarry-queue/cron, which `cron()` needs.
   */
  constructor(opts) {
    super();
    const o = options(opts, "options", ["keepAlive", "onerror", "clock", "cron"], "Scheduler");
    const { keepAlive = true, onerror = null, clock, cron = null } = o;
    checkBoolean(keepAlive, "options.keepAlive");
    if (onerror !== null && typeof onerror !== "function")
      throw new TypeError(`options.onerror must be a function, got ${describe(onerror)}`);
    if (clock !== undefined) checkClock(clock);
    if (cron !== null && typeof cron !== "function")
      throw new TypeError(`cron must be the cron function of "tarry-queue/cron", got ${describe(cron)}`);
    this.onerror = onerror;
    this.#cron = cron;
    this.#tl = new Timeline("Scheduler", Infinity, keepAlive, clock, () => this.#onTimer());
  }

  /** Callbacks waiting to run: one-off callbacks and the pending occurrence of each active schedule. */
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
    const epoch = instantOf(deadline, "deadline");
    const tl = this.#tl;
    tl.open();
    return this.#add({ fn, args }, tl.clock.fromEpoch(epoch));
  }

  /**
   * Runs `fn(due)` at a fixed rate: occurrence k is due at start + k·periodMs (`due`, a
   * Date), never drifting with the time runs take. `start` (a Date or epoch ms): the first
   * occurrence, default one period from now; one in the past sets the phase, and the first
   * run is the first occurrence from now on. `catchUp` ("one", "all" or "none") says what
   * runs when the schedule fell behind (see `catchUp` in schedule/rule.js), `overlap`
   * (default false) whether an occurrence runs while the previous run's promise is pending.
   *
   * @example
   * const s = scheduler.every(10 * 60_000, (due) => refresh(due));
   */
  every(periodMs, fn, opts) {
    checkPeriod(periodMs);
    checkFn(fn);
    const o = knownOptions(opts, EVERY_OPTIONS, "every()");
    const common = this.#common(o);
    const start = startOf(o.start);
    const now = Date.now();
    const rule = new EveryRule(periodMs, start ?? defaultStart(now, periodMs, "periodMs"));
    this.#tl.open();
    return this.#begin(rule, fn, common, now, o.start === undefined ? "periodMs" : "start");
  }

  /**
   * Runs `fn(due)` at the occurrences of a cron expression in `timezone` (IANA, default
   * "UTC"), with Vixie cron's rule at daylight-saving changes (see tarry-queue/cron). Needs
   * `new Scheduler({ cron })` with `cron` from tarry-queue/cron. `start`: the first run is
   * the first occurrence at or after it (default: the first after now); `catchUp` and
   * `overlap` as for every().
   *
   * @example
   * const t = scheduler.cron("0 9 * * 1-5", (due) => report(due), { timezone: "Europe/Berlin" });
   */
  cron(expression, fn, opts) {
    const make = this.#cron;
    if (make === null) {
      throw new TypeError(
        'cron() needs the cron rules, which load apart (they bring croner): import { cron } from "tarry-queue/cron" and make the scheduler with new Scheduler({ cron })',
      );
    }
    checkFn(fn);
    const o = knownOptions(opts, CRON_OPTIONS, "cron()");
    const common = this.#common(o);
    const start = startOf(o.start);
    const rule = make(expression, o.timezone === undefined ? undefined : { timezone: o.timezone });
    if (typeof rule?.next !== "function" || typeof rule?.latest !== "function")
      throw new TypeError(`cron must be the cron function of "tarry-queue/cron": it returned no rule`);
    this.#tl.open();
    const now = Date.now();
    // By default the first occurrence after now; with `start`, the first at or after it.
    return this.#begin(
      rule,
      fn,
      common,
      start === undefined ? now + 1 : Math.max(start, now),
      start === undefined ? "expression" : "start",
    );
  }

  /** The active or paused schedule named `id` (a Schedule is taken as it is), or undefined. */
  #recurrence(schedule) {
    if (schedule instanceof Schedule) {
      const r = this.#byId.get(schedule.id);
      return r?.schedule === schedule ? r : undefined;
    }
    checkScheduleId(schedule, "schedule");
    return this.#byId.get(schedule);
  }

  /**
   * Runs schedule `schedule` (its id or its Schedule) once now, beside its occurrences: the
   * run counts (runs, lastRun, maxRuns) and its pending occurrence stays where it is. With
   * overlap false it does not run while a run of the schedule lasts (its promise pending):
   * false then, and nothing is counted. A paused schedule runs and stays paused. False for
   * a schedule that is cancelled, ended or unknown.
   * @example
   * scheduler.trigger("nightly-report");
   */
  trigger(schedule) {
    const r = this.#recurrence(schedule);
    return r === undefined ? false : this.#trigger(r);
  }

  /**
   * The next `n` (1 to 100) occurrences of schedule `schedule` (its id or its Schedule), as
   * Dates, computed from its rule: the pending one first, none after stopAt, no more than
   * maxRuns leaves; for a paused schedule, the ones resume() would run from now. Empty for a
   * schedule that is cancelled, ended or unknown.
   */
  nextRuns(schedule, n) {
    checkNextRuns(n);
    const r = this.#recurrence(schedule);
    return r === undefined ? [] : this.#nextRuns(r, n);
  }

  #trigger(r) {
    if (r.state !== "active" && r.state !== "paused") return false;
    if (r.running > 0 && !r.overlap) return false;
    this.#runOccurrence(r, Date.now());
    return true;
  }

  #nextRuns(r, n) {
    checkNextRuns(n);
    let first;
    if (r.state === "active" || r.state === "paused") first = r.due;
    else return [];
    return nextRunsOf(r.rule, first, n, { ...r.limits, runs: r.runs }).map((t) => new Date(t));
  }

  /** Forgets a pending callback; false when the handle names none (it ran, or was cancelled). */
  cancel(handle) {
    checkHandle(handle, "schedule");
    if (this.#isSchedule(handle) || this.#tl.cancel(handle) === undefined) return false;
    this.#rearm();
    return true;
  }

  /** Moves a pending callback to `delayMs` from now; false when the handle names none. */
  reschedule(handle, delayMs) {
    checkHandle(handle, "schedule");
    checkMs(delayMs, "delayMs");
    const tl = this.#tl;
    if (this.#isSchedule(handle)) return false;
    const moved = tl.open().reschedule(handle, this.#notThisWake(tl.clock.now() + delayMs));
    if (moved) this.#rearm();
    return moved;
  }

  /** Milliseconds until a pending callback runs (negative when overdue); undefined when none. */
  delayOf(handle) {
    checkHandle(handle, "schedule");
    return this.#tl.delayOf(handle);
  }

  /** Drops every pending callback and ends every schedule, disarms the timer and frees the wasm memory. Idempotent. */
  close() {
    for (const r of this.#schedules) this.#end(r, "ended");
    this.#watch = 0;
    this.#tl.close();
  }

  [dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "Scheduler";
  }

  /** Whether a handle names a schedule's pending item (which only its Schedule moves or cancels). */
  #isSchedule(handle) {
    const d = this.#tl.deadlines;
    return d !== null && !Number.isNaN(d.deadlineOf(handle)) && this.#tl.values.named(handle) instanceof Recurrence;
  }

  /** id, catchUp, overlap, maxRuns and stopAt, checked, with their defaults. */
  #common(o) {
    const { id, catchUp: mode = "one", overlap = false } = o;
    if (id !== undefined) {
      checkScheduleId(id, "options.id");
      if (this.#byId.has(id))
        throw new RangeError(`options.id ${JSON.stringify(id)} names a schedule of this scheduler already`);
    }
    checkCatchUp(mode);
    checkBoolean(overlap, "overlap");
    return { id, catchUp: mode, overlap, limits: limitsOf(o) };
  }

  /**
   * Starts a schedule at its first occurrence at or after `from`; throws (nothing changed)
   * when it has none up to the latest instant (a RangeError naming `name`, the argument that
   * chose `from`) or the host refuses the timer.
   */
  #begin(rule, fn, { id, catchUp: mode, overlap, limits }, from, name) {
    const first = firstOccurrence(rule, from, name);
    if (limits.stopAt !== undefined && first > limits.stopAt) throw stopAtBefore(limits.stopAt, first);
    const r = new Recurrence(rule, fn, mode, overlap, limits);
    r.due = first;
    r.schedule = new Schedule(secret, r, this.#host, id);
    this.#activate(r);
    this.#schedules.add(r);
    this.#byId.set(r.schedule.id, r);
    return r.schedule;
  }

  /** Puts a schedule's pending occurrence on the timeline and arms the timer; on a refusal, undoes it and throws. */
  #activate(r) {
    const tl = this.#tl;
    if (this.#active.size === 0) this.#offset = tl.clock.offset().low; // no watch ran meanwhile
    this.#place(r);
    this.#active.add(r);
    try {
      this.#watchOn();
      tl.sync(true);
    } catch (e) {
      this.#active.delete(r);
      tl.cancel(r.handle);
      r.handle = 0;
      this.#watchOff();
      this.#rearm(); // the callbacks already pending need the timer back
      throw e;
    }
  }

  /** Offers a schedule's pending occurrence at its deadline on the clock (erring late). */
  #place(r, offset = this.#offset) {
    r.handle = this.#tl.offer(r, this.#notThisWake(r.due - offset));
  }

  #cancelSchedule(r) {
    if (r.state !== "active" && r.state !== "paused") return false;
    this.#end(r, "cancelled");
    this.#rearm();
    return true;
  }

  #pauseSchedule(r) {
    if (r.state !== "active") return false;
    this.#unplace(r);
    r.state = "paused";
    this.#rearm();
    return true;
  }

  #resumeSchedule(r) {
    if (r.state !== "paused") return false;
    this.#tl.open();
    // The occurrence it was waiting for when paused comes back: if it was due meanwhile, the
    // schedule fell behind, and catchUp decides what runs, as for a process that was down.
    this.#activate(r); // throws, still paused, if the host refuses the timer
    r.state = "active";
    return true;
  }

  /** Takes an active schedule's item off the timeline. */
  #unplace(r) {
    r.waiting = false;
    if (!this.#active.delete(r)) return;
    if (r.handle !== 0) this.#tl.cancel(r.handle);
    r.handle = 0;
    if (this.#active.size === 0) this.#watchOff();
  }

  #end(r, state) {
    if (this.#tl.deadlines !== null) this.#unplace(r);
    else this.#active.delete(r);
    this.#schedules.delete(r);
    if (this.#byId.get(r.schedule.id) === r) this.#byId.delete(r.schedule.id);
    r.state = state;
    r.due = undefined;
  }

  /** Starts the clocks' watch when it is not running. */
  #watchOn() {
    if (this.#watch !== 0) return;
    const tl = this.#tl;
    this.#watch = tl.open().addTimeout(tl.clock.now() + WALL_CHECK_MS);
  }

  #watchOff() {
    if (this.#watch === 0) return;
    this.#tl.deadlines?.cancelTimeout(this.#watch);
    this.#watch = 0;
  }

  /**
   * Re-reads the offset between the wall clock and the scheduler's clock; when it moved
   * (the wall clock stepped, or the clock paused while the machine slept), converts every
   * active schedule's deadline again.
   */
  #checkClocks() {
    const tl = this.#tl;
    const d = /** @type {import("../wasm.js").Deadlines} */ (tl.deadlines);
    const low = tl.clock.offset().low;
    if (Math.abs(low - this.#offset) <= WALL_STEP_MS) return;
    this.#offset = low;
    for (const r of this.#active) {
      if (r.handle !== 0) d.reschedule(r.handle, this.#notThisWake(r.due - low));
    }
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
      if (d.pollTimeout(now) >= 0) {
        // The clocks' watch (the only take-timeout). What it converts again to a deadline
        // already passed runs in the next wake-up, right after this one.
        this.#watch = 0;
        this.#checkClocks();
        if (this.#active.size > 0) this.#watchOn();
      }
      for (let slot = d.takeDue(now); slot >= 0; slot = d.takeDue(now)) {
        const job = tl.values.take(slot);
        if (job instanceof Recurrence) this.#occur(job);
        else {
          if (this[HEARD]("delivered")) this[POST]("delivered", { lateness: Math.max(0, now - d.lastDeadline) });
          this.#run(job);
        }
        d = tl.deadlines;
        if (d === null) return; // a callback closed the scheduler
      }
    } finally {
      this.#wakeStart = NaN;
    }
    this.#rearm();
  }

  /** A schedule's item came due on the clock: run its occurrence if the wall clock agrees, and place the next. */
  #occur(r) {
    r.handle = 0;
    const wall = Date.now();
    if (wall < r.due) {
      // Not due by the wall clock: it stepped back (a step beyond WALL_STEP_MS converts
      // every schedule again), or the offset shrank by less. Convert this one afresh.
      this.#checkClocks();
      this.#place(r, Math.min(this.#offset, this.#tl.clock.offset().low));
      return;
    }
    let { run, next } = catchUp(r.rule, r.due, wall, r.catchUp);
    const { stopAt } = r.limits;
    if (stopAt !== undefined) {
      if (run !== undefined && run > stopAt) run = undefined; // a catch-up "one" past the end
      if (next !== undefined && next > stopAt) next = undefined;
    }
    if (run !== undefined && r.running > 0 && !r.overlap && run <= r.began) {
      // Missed before the running run began (a catch-up "all"): not an overrun, so not
      // skipped; it waits for that run to end (#settled places it again).
      r.waiting = true;
      return;
    }
    if (run !== r.due && this[HEARD]("skipped")) {
      this[POST]("skipped", { schedule: r.schedule.id, due: r.due, reason: "missed" });
    }
    if (next === undefined) {
      this.#end(r, "ended");
    } else {
      r.due = next;
      this.#place(r);
    }
    if (run !== undefined) this.#runOccurrence(r, run);
  }

  #runOccurrence(r, due) {
    if (r.running > 0 && !r.overlap) {
      r.skipped++;
      if (this[HEARD]("skipped")) this[POST]("skipped", { schedule: r.schedule.id, due, reason: "overlap" });
      return;
    }
    r.runs++;
    r.lastRun = due;
    r.began = Date.now();
    if (r.limits.maxRuns !== undefined && r.runs >= r.limits.maxRuns && r.state !== "ended") {
      this.#end(r, "ended"); // its last run: no occurrence stays pending
      this.#rearm();
    }
    if (this[HEARD]("occurrence")) {
      this[POST]("occurrence", { schedule: r.schedule.id, due, lateness: Math.max(0, Date.now() - due) });
    }
    let result;
    try {
      result = r.fn(new Date(due));
    } catch (e) {
      this.#fail(e);
      return;
    }
    const then = thenOf(result);
    if (then === null) return;
    r.running++;
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      r.running--;
      if (r.running === 0 && r.waiting) this.#release(r);
    };
    try {
      then.call(
        result,
        () => done(),
        (e) => {
          done();
          this.#fail(e);
        },
      );
    } catch (e) {
      done();
      this.#fail(e);
    }
  }

  /** The run an occurrence waited for has ended: it is due now (on the next wake-up). */
  #release(r) {
    r.waiting = false;
    if (r.state !== "active" || this.#tl.deadlines === null) return;
    this.#place(r);
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
