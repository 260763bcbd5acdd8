// Occurrences: the rules that say when a schedule's runs are due, and what a schedule that
// fell behind runs. Every engine (the in-memory Scheduler, Redis, Durable Objects) drives
// its schedules through this module, so the rules are written once.
//
// A rule is pure: `next(after)` is the first occurrence strictly after the instant `after`
// and `latest(at)` the last one at or before `at` (epoch ms, or undefined when there is
// none), computed from the rule alone, never from a clock. So an engine asks it on
// whatever clock it keeps, and a test on any clock it likes. Occurrences are wall-clock
// instants (epoch ms): a schedule is due when the wall clock reaches them, which is what
// lets a process that slept, or every process of a queue having been down, see what it
// missed.
//
// - `EveryRule`: a fixed rate. Occurrence k is due at start + k·period (k ≥ 0), computed
//   from k and never by adding periods, so it does not drift whatever the runs cost. O(1).
// - `CronRule` (./cron.js, loaded only by users of cron: it brings croner in): a cron
//   expression in an IANA time zone. This module does not import it.
//
// `catchUp(rule, due, now, mode)` says what a schedule whose occurrence `due` has come does
// at `now`: the same answer on every engine.

import {
  checkInstant,
  describe,
  EARLIEST_INSTANT,
  INSTANTS,
  instantOf,
  LATEST_INSTANT,
  options,
} from "../engine/arguments.js";

/** What catchUp accepts, and the default. */
export const CATCH_UP = Object.freeze(["one", "all", "none"]);

/** The longest period: the span of the instants every engine holds (arguments.js). */
const MAX_PERIOD_MS = LATEST_INSTANT - EARLIEST_INSTANT;

/** An occurrence, or undefined when it falls after the latest instant: the rule has ended. */
const within = (t) => (t <= LATEST_INSTANT ? t : undefined);

/**
 * A fixed rate: occurrence k at start + k·period, for k ≥ 0, up to the latest instant every
 * engine holds (the rule ends there). k is found by one remainder, never by a loop: within
 * the instant range every quantity is an integer below 2^53, so the arithmetic is exact, and
 * whatever numbers it is handed (a record written before the range was checked) it costs the
 * same. includes/every.lua computes the same in Lua (tests/redis/lua.test.mjs compares them).
 */
export class EveryRule {
  /** The period, a whole number of milliseconds ≥ 1. */
  periodMs;
  /** The first occurrence (epoch ms, whole). */
  start;

  /**
   * @param {number} periodMs a whole number of milliseconds, at least 1
   * @param {number} start the first occurrence, epoch ms (rounded up to a whole ms), an instant
   */
  constructor(periodMs, start) {
    checkPeriod(periodMs);
    if (typeof start !== "number" || !Number.isFinite(start))
      throw new TypeError(`start must be a finite number of epoch milliseconds, got ${describe(start)}`);
    checkInstant(start, "start");
    this.periodMs = periodMs;
    this.start = Math.ceil(start);
  }

  /** The first occurrence strictly after `after` (epoch ms), or undefined past the latest instant. */
  next(after) {
    const { start, periodMs } = this;
    if (after < start) return within(start);
    const d = after - start;
    return within(start + (d - (d % periodMs)) + periodMs);
  }

  /** The last occurrence at or before `at`, or undefined before the first. */
  latest(at) {
    const { start, periodMs } = this;
    if (at < start) return undefined;
    const d = Math.min(at, LATEST_INSTANT) - start;
    return start + (d - (d % periodMs));
  }

  /** The rule as plain data. */
  toJSON() {
    return { every: this.periodMs, start: this.start };
  }
}

/** A period: a whole number of milliseconds from 1 up to the span of the instant range. */
export function checkPeriod(periodMs, name = "periodMs") {
  if (typeof periodMs !== "number")
    throw new TypeError(`${name} must be a number of milliseconds, got ${describe(periodMs)}`);
  if (!Number.isInteger(periodMs) || periodMs < 1 || periodMs > MAX_PERIOD_MS)
    throw new RangeError(`${name} must be a whole number of milliseconds from 1 to ${MAX_PERIOD_MS}, got ${periodMs}`);
}

/**
 * The default start of an every schedule made at `now`: one period later, which must be an
 * instant (a RangeError naming the period, `name`, otherwise).
 */
export function defaultStart(now, periodMs, name) {
  const start = Math.ceil(now + periodMs);
  if (start > LATEST_INSTANT)
    throw new RangeError(
      `${name} puts the first occurrence (one period from now) at ${start}, after the latest instant every engine holds (${INSTANTS})`,
    );
  return start;
}

/**
 * The first occurrence of `rule` at or after `from` (epoch ms), which must exist before the
 * latest instant: a RangeError naming `name` (the argument that chose `from`) otherwise.
 */
export function firstOccurrence(rule, from, name) {
  const first = firstAtOrAfter(rule, from);
  if (first === undefined)
    throw new RangeError(
      `${name}: the schedule has no occurrence at or after ${new Date(Math.min(from, LATEST_INSTANT)).toISOString()} up to ${new Date(LATEST_INSTANT).toISOString()}, the latest instant every engine holds`,
    );
  return first;
}

/** A catchUp option: "one" (the default), "all" or "none". */
export function checkCatchUp(mode) {
  if (typeof mode !== "string" || !CATCH_UP.includes(mode))
    throw new (typeof mode === "string" ? RangeError : TypeError)(
      `catchUp must be "one", "all" or "none", got ${describe(mode)}`,
    );
}

/** A start option (a Date of any realm or epoch ms) as epoch ms, an instant; undefined stays undefined. */
export function startOf(start) {
  return start === undefined ? undefined : instantOf(start, "start");
}

/**
 * What a schedule whose occurrence `due` has come (`now` ≥ `due`, both epoch ms) does now,
 * under `mode`. The schedule is *behind* when the occurrence after `due` is due as well:
 * it fell a whole interval behind (the process slept or was down, the event loop was
 * blocked, a hidden tab's timers were throttled). An occurrence late by less than that is
 * merely late and runs whatever the mode says.
 *
 * - on time or late: `{ run: due, next }`, next being the occurrence after `due`;
 * - behind, "all": `{ run: due, next }` with `next` ≤ now: the engine comes back for it
 *   (one occurrence at a time, so a long backlog never runs in one burst);
 * - behind, "one": `{ run: latest }`, the latest occurrence at or before `now`, standing
 *   for all that were missed; the ones between are not run;
 * - behind, "none": `{ run: undefined }`: none of the missed occurrences runs.
 *
 * `next` is the occurrence to wait for afterwards (after `now` unless mode is "all"), or
 * undefined when the rule has no more. `behind` says which case it was.
 *
 * @param {{next(after: number): number | undefined, latest(at: number): number | undefined}} rule
 * @param {number} due
 * @param {number} now
 * @param {"one" | "all" | "none"} mode
 * @returns {{ run: number | undefined, next: number | undefined, behind: boolean }}
 */
export function catchUp(rule, due, now, mode) {
  const after = rule.next(due);
  const behind = after !== undefined && after <= now;
  if (!behind || mode === "all") return { run: due, next: after, behind };
  const latest = rule.latest(now) ?? after; // at least `after`, which is due
  return { run: mode === "one" ? latest : undefined, next: rule.next(latest), behind: true };
}

/**
 * The first occurrence at or after `at` (epoch ms), or undefined. Occurrences of both
 * rules are whole milliseconds, so "strictly after the millisecond before".
 */
export function firstAtOrAfter(rule, at) {
  return rule.next(Math.ceil(at) - 1);
}

/**
 * An options bag whose names are all in `known`: an unknown name (a typo such as
 * `catchup`) is refused, naming it, instead of being ignored. The one checker every engine
 * uses (arguments.js `options`), so the message is theirs: "options.catchup is not an option
 * of every(); did you mean catchUp?".
 */
export function knownOptions(opts, known, where) {
  return options(opts, "options", known, where);
}
