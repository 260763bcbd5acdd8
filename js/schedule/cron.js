// CronRule: the occurrences of a cron expression in an IANA time zone, on croner (a
// well-kept cron library with no dependencies that works in every runtime and reads time
// zones through Intl). Only users of cron load this module: the in-memory entries never
// import it (`tarry-queue/cron` does), so a page that does not use cron does not carry
// croner.
//
// The expression has five fields (minute hour day-of-month month day-of-week) or six, with
// seconds first; names (JAN, MON), lists, ranges, steps and the nicknames (@daily, @hourly,
// ...) as croner reads them. Day of month and day of week are ORed when both are
// restricted (as in Vixie cron). The time zone is IANA's (default "UTC").
//
// Daylight saving time, Vixie cron's rule (croner's own: tests/schedule/ check it against
// hand-written instants and a brute-force model):
// - a *fixed-time* expression, whose seconds (when given), minute and hour fields each name
//   one value (`30 2 * * *`), runs once a day: at the first instant after the gap when a
//   spring-forward skips its time, and at the first of the two instants when a fall-back
//   repeats it;
// - any other expression (a wildcard, range, step or list in the seconds, minute or hour
//   field: `15 * * * *`, `*/30 * * * *`) follows the wall clock: a local time that does not
//   exist is skipped, one that occurs twice runs twice.
// - Occurrences are instants: local times that land on the same instant are one occurrence.
//
// Costs: an occurrence is found in tens to hundreds of microseconds (croner walks the
// fields and asks Intl for the wall time in the zone); in UTC a tenth of that.

import { Cron } from "croner";
import { describe, EARLIEST_INSTANT, LATEST_INSTANT } from "../engine/arguments.js";
import { knownOptions } from "./rule.js";

/**
 * The earliest instant croner is asked about: a week inside a Date's range, since croner
 * converting the wall time of a zone fails on dates at its very edge.
 */
const EARLIEST_ASKED = EARLIEST_INSTANT + 7 * 86_400_000;

/** Zones croner may treat as a fixed offset of 0 (its fast path, without Intl). */
const UTC_ZONES = new Set(["UTC", "Etc/UTC", "Etc/GMT", "GMT", "Etc/Universal", "Etc/Zulu", "Universal", "Zulu"]);

/** The cron occurrences of one expression in one time zone. */
export class CronRule {
  /** The expression as given. */
  expression;
  /** The IANA time zone, as given. */
  timezone;
  #cron;

  /**
   * @param {string} expression five or six fields
   * @param {string} [timezone] an IANA time zone; default "UTC"
   */
  constructor(expression, timezone = "UTC") {
    if (typeof expression !== "string")
      throw new TypeError(`expression must be a cron expression (a string), got ${describe(expression)}`);
    checkTimezone(timezone);
    const where = UTC_ZONES.has(timezone) ? { utcOffset: 0 } : { timezone };
    try {
      this.#cron = new Cron(expression, { ...where, mode: "5-or-6-parts" });
    } catch (e) {
      const message = String(e?.message ?? e).replace(/^CronPattern: /, "");
      throw new (e instanceof RangeError ? RangeError : TypeError)(
        `expression ${JSON.stringify(expression)} is not a cron expression tarry reads: ${message}`,
      );
    }
    // An expression no date matches (`0 0 30 2 *`) is refused here, at the call, rather
    // than by the first engine that looks for an occurrence. croner gives up on it at once.
    if (this.#cron.nextRun(new Date(0)) === null)
      throw new RangeError(
        `expression ${JSON.stringify(expression)} has no occurrence: no date matches its day and month fields`,
      );
    this.expression = expression;
    this.timezone = timezone;
  }

  /**
   * The first occurrence strictly after `after` (epoch ms), or undefined when none is left
   * up to the latest instant every engine holds (arguments.js LATEST_INSTANT).
   */
  next(after) {
    if (!(after < LATEST_INSTANT)) return undefined;
    const d = this.#cron.nextRun(new Date(Math.max(after, EARLIEST_ASKED)));
    const t = d === null ? undefined : d.getTime();
    return t !== undefined && t <= LATEST_INSTANT ? t : undefined;
  }

  /** The last occurrence at or before `at` (epoch ms), or undefined. */
  latest(at) {
    const [d] = this.#cron.previousRuns(
      1,
      new Date(Math.floor(Math.max(Math.min(at, LATEST_INSTANT), EARLIEST_ASKED)) + 1),
    );
    return d === undefined ? undefined : d.getTime();
  }

  /** The rule as plain data. */
  toJSON() {
    return { cron: this.expression, timezone: this.timezone };
  }
}

/** Whether `timezone` names a time zone this runtime's Intl knows. */
export function checkTimezone(timezone) {
  if (typeof timezone !== "string")
    throw new TypeError(`timezone must be an IANA time zone name (a string), got ${describe(timezone)}`);
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new RangeError(`timezone must be an IANA time zone name this runtime knows, got ${describe(timezone)}`);
  }
}

/**
 * The cron rule of `expression` in `timezone` (IANA, default "UTC"), for
 * `new Scheduler({ cron })` and for computing occurrences directly.
 *
 * @example
 * const rule = cron("0 9 * * 1-5", { timezone: "Europe/Berlin" });
 * new Date(rule.next(Date.now())); // the next weekday at 09:00 in Berlin
 *
 * @param {string} expression
 * @param {{ timezone?: string }} [opts]
 */
export function cron(expression, opts) {
  const { timezone = "UTC" } = knownOptions(opts, ["timezone"], "cron()");
  return new CronRule(expression, timezone);
}
