// Types of schedules, one declaration for every engine: the options of the in-memory
// Scheduler's `every()` and `cron()` and of a durable queue's `schedule()`, and a durable
// schedule's rule and description. No entry of its own: tarry.d.ts re-exports them (so every
// entry of "tarry-queue" has them), redis.d.ts as ScheduleRule, RedisScheduleOptions and
// ScheduleInfo, workerd.d.ts also as DurableScheduleRule, DurableScheduleOptions and
// DurableScheduleInfo. docs/schedules.md has the rules these options name.

/**
 * Options of a schedule, on every engine: Scheduler#every and Scheduler#cron, and a durable
 * queue's `schedule()` (docs/schedules.md has the rules).
 */
export interface ScheduleOptions {
  /**
   * What runs when the schedule fell behind (the occurrence after the one due was due as
   * well: the process slept or was stopped, the event loop was blocked): "one" (default)
   * runs the latest missed occurrence once, for all of them; "all" runs each, in order,
   * one per wake-up; "none" runs none of them. An occurrence late by less than that runs.
   */
  catchUp?: "one" | "all" | "none";
  /**
   * false (default): an occurrence that comes due while the previous run is still running
   * (its callback's promise pending; on Redis, its delivery in flight) is skipped and
   * counted (`skipped`), and a missed one that catchUp "all" runs waits for that run to
   * end; true: it runs. A DurableDelayQueue keeps the option with the schedule: its
   * deliver() runs one handler at a time, so its occurrences never overlap.
   */
  overlap?: boolean;
  /**
   * every: the first occurrence (default one period from now; one in the past sets the
   * phase). cron: no occurrence before it (default now).
   */
  start?: number | Date;
}

/** A durable schedule's rule: a fixed rate (`every` ms), or a cron expression in an IANA time zone (default "UTC"). */
export type ScheduleRule =
  | { every: number; cron?: undefined; timezone?: undefined }
  | { cron: string; timezone?: string; every?: undefined };

/** A durable schedule, as `schedule()` and `schedules()` give it. Times are epoch ms. */
export type ScheduleInfo<T = unknown> = (
  | { every: number; cron?: undefined }
  | { cron: string; timezone: string; every?: undefined }
) & {
  id: string;
  /** every: its first occurrence (the phase); cron: the start given, or undefined. */
  start: number | undefined;
  catchUp: "one" | "all" | "none";
  overlap: boolean;
  /** What each occurrence carries as its value (from a DurableDelayQueue: a copy). */
  value: T;
  /** The due time of its pending occurrence; undefined when its rule has no more. */
  nextRun: number | undefined;
  /** The due time of the latest occurrence handed out, or undefined. */
  lastRun: number | undefined;
  /** Occurrences handed out so far. */
  runs: number;
  /** Occurrences skipped because the previous run was still running (overlap: false; always 0 on a DurableDelayQueue). */
  skipped: number;
};
