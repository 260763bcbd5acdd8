// Types for `tarry-queue/cron` (js/cron.js): cron rules for the Scheduler, in an entry of
// their own so that croner loads only where cron is used.

/**
 * `tarry-queue/cron`: cron rules for `Scheduler#cron` (`new Scheduler({ cron })`), on
 * croner, in an entry of their own so that pages without cron do not load croner. A rule
 * gives occurrences as epoch ms, in an IANA time zone, with Vixie cron's rule at
 * daylight-saving changes.
 *
 * @module tarry-queue/cron
 */
// (A CronRule is an OccurrenceRule of tarry.d.ts, structurally; no import, so that each
// entry's types stand alone.)

/**
 * The occurrences of a cron expression in an IANA time zone. Five fields (minute hour
 * day-of-month month day-of-week) or six (seconds first); day of month and day of week are
 * ORed when both are restricted. At daylight-saving changes, Vixie cron's rule: an
 * expression whose seconds, minute and hour fields each name one value runs once a day (at
 * the first instant after a spring-forward gap, at the first of a fall-back's two
 * instants); any other follows the wall clock (nonexistent times skipped, repeated times
 * run twice).
 */
export declare class CronRule {
  constructor(expression: string, timezone?: string);
  readonly expression: string;
  readonly timezone: string;
  /** The first occurrence strictly after `after` (epoch ms), or undefined when none is left. */
  next(after: number): number | undefined;
  /** The last occurrence at or before `at` (epoch ms), or undefined. */
  latest(at: number): number | undefined;
  toJSON(): { cron: string; timezone: string };
}

/**
 * The cron rule of `expression` in `timezone` (default "UTC"): pass this function to
 * `new Scheduler({ cron })`, or call it for occurrences.
 *
 * @example
 * const rule = cron("0 9 * * 1-5", { timezone: "Europe/Berlin" });
 * new Date(rule.next(Date.now())!); // the next weekday at 09:00 in Berlin
 */
export declare function cron(expression: string, options?: { timezone?: string }): CronRule;
