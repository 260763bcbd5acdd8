// The schedules of a DurableDelayQueue (js/durable/): what its schedule(), unschedule(),
// deliver() and open() compute, as pure functions of a schedule and the time; js/durable/
// (schedules.js, consumer.js, load.js) commits what they return, with the rest of each call's change, in one storage transaction.
// The rules are docs/schedules.md's, through rule.js (catchUp) and spec.js (the checks and
// the occurrences' ids), as on Redis.
//
// A schedule has exactly one pending occurrence, an item of the queue (`<id>@<due>`, the
// schedule's value, `schedule` naming it). deliver() hands it out and places the next one in
// the same transaction as the hand-out (which is also the previous delivery's outcome), so an
// eviction or a restart at any point leaves the chain whole: either the occurrence is still
// pending, or it is in flight (its attempt counted) and the next one is pending. The object's
// alarm is the one timer: the pending occurrences are items like the others.
//
// deliver() runs one handler at a time, so two runs of a schedule never run at once, and an
// occurrence that came due during a long run comes out after it (late; catchUp decides when
// it fell a whole period behind). A run lasts until it is done or dead, its retries included:
// with overlap false, an occurrence that comes due while the latest run waits for its retry
// is skipped and counted (occurrenceStep), as on Redis.
//
// maxRuns and stopAt end a schedule (spec.js `endsAt`): its last run places no next
// occurrence, and it stays, listed with no next run. A paused schedule keeps `due`, the
// occurrence it waits for, with no item for it; resume() places it again, and if it came due
// meanwhile, catchUp decides at its hand-out what runs.
//
// Storage: `${prefix}sched:<id>` → { every | cron, timezone, start, catchUp, overlap, value,
// due, last, began, runs, skipped, maxRuns, stopAt, paused } (times epoch ms, null for none;
// a record written before maxRuns, stopAt and paused reads as null, null, false).

import { catchUp, defaultStart, EveryRule, firstOccurrence } from "./rule.js";
import { cronRuleOf, endsAt, occurrenceId, stopAtBefore } from "./spec.js";

/**
 * A schedule as the queue keeps it in memory: its stored fields and its rule.
 * @typedef {object} DurableSchedule
 * @property {string} id
 * @property {number} [every]
 * @property {string} [cron]
 * @property {string} [timezone]
 * @property {number | null} start every: its first occurrence; cron: the start given, or null
 * @property {"one" | "all" | "none"} catchUp
 * @property {boolean} overlap
 * @property {any} value
 * @property {number | null} due its pending occurrence, null once its rule has none left
 * @property {number | null} last the due time of the latest run
 * @property {number | null} [began] when the latest run was first handed out (Date.now())
 * @property {number} runs
 * @property {number} skipped
 * @property {number | null} maxRuns
 * @property {number | null} stopAt
 * @property {boolean} paused
 * @property {{ next(after: number): number | undefined, latest(at: number): number | undefined }} rule
 */

/** The fields storage holds for a schedule beside its rule (every, or cron and timezone). */
const FIELDS = /** @type {const} */ ([
  "start",
  "catchUp",
  "overlap",
  "value",
  "due",
  "last",
  "began",
  "runs",
  "skipped",
  "maxRuns",
  "stopAt",
  "paused",
]);

/**
 * The rule and FIELDS of `s`: what storage holds for a schedule.
 * @param {Record<string, any>} s
 * @returns {Record<string, any>}
 */
function fieldsOf(s) {
  /** @type {Record<string, any>} */
  const out = s.every !== undefined ? { every: s.every } : { cron: s.cron, timezone: s.timezone };
  for (const k of FIELDS) out[k] = s[k];
  return out;
}

/** What storage holds for a schedule. @param {DurableSchedule} s */
export function storedSchedule(s) {
  return { ...fieldsOf(s), began: s.began ?? null };
}

/**
 * A schedule read back from storage (id and record), or null when it is not one of ours.
 * Loads croner for a cron schedule.
 * @returns {Promise<DurableSchedule | null>}
 */
export async function scheduleOf(id, r) {
  if (r === null || typeof r !== "object" || r.value === undefined) return null;
  const time = (t) => t === null || Number.isFinite(t);
  if (!time(r.start) || !time(r.due) || !time(r.last)) return null;
  if (!["one", "all", "none"].includes(r.catchUp) || typeof r.overlap !== "boolean") return null;
  if (!Number.isSafeInteger(r.runs) || !Number.isSafeInteger(r.skipped)) return null;
  let rule;
  try {
    if (r.every !== undefined) rule = new EveryRule(r.every, r.start);
    else if (typeof r.cron === "string" && typeof r.timezone === "string") rule = await cronRuleOf(r.cron, r.timezone);
    else return null;
  } catch {
    return null;
  }
  const began = Number.isFinite(r.began) ? r.began : null; // null in a record written before it was kept
  // Records written before the limits and pause read as none and not paused.
  const maxRuns = Number.isSafeInteger(r.maxRuns) && r.maxRuns >= 1 ? r.maxRuns : null;
  const stopAt = Number.isFinite(r.stopAt) ? r.stopAt : null;
  const paused = r.paused === true;
  return /** @type {DurableSchedule} */ ({ id, ...fieldsOf(r), began, maxRuns, stopAt, paused, rule });
}

/** A schedule as schedules() and schedule() give it (the value copied). @param {DurableSchedule} s */
export function infoOf(s) {
  const rule = s.every !== undefined ? { every: s.every } : { cron: s.cron, timezone: s.timezone };
  return {
    id: s.id,
    ...rule,
    start: s.start ?? undefined,
    catchUp: s.catchUp,
    overlap: s.overlap,
    value: structuredClone(s.value),
    nextRun: s.due ?? undefined,
    lastRun: s.last ?? undefined,
    runs: s.runs,
    skipped: s.skipped,
    maxRuns: s.maxRuns ?? undefined,
    stopAt: s.stopAt ?? undefined,
    paused: s.paused,
  };
}

/** A schedule's limits as spec.js's endsAt and nextRunsOf take them. @param {DurableSchedule} s */
export function limitsOfStored(s) {
  return { maxRuns: s.maxRuns ?? undefined, stopAt: s.stopAt ?? undefined, runs: s.runs };
}

/**
 * The schedule that `schedule(id, rule, value, opts)` makes at `now`, from the one of that id
 * (`old`, or undefined): `{ schedule, first }`, where `first` is the due time of the pending
 * occurrence to place, or undefined when the old one stays (the same rule: its chain goes
 * on, with the new value). A new rule's first occurrence is later than the latest run, so no
 * occurrence runs twice, and later than `gone`, the due time of a pending occurrence that is
 * no longer there (an item offered under its id replaced it), when there is one. Throws a
 * RangeError when the rule has no occurrence left.
 * @param {DurableSchedule | undefined} old
 * @param {import("./spec.js").ScheduleSpec} spec
 * @param {any} value the copy to keep
 * @param {{ next(after: number): number | undefined, latest(at: number): number | undefined } | null} cronRule
 * @param {number} now
 * @param {number} [gone]
 */
export function planSchedule(old, spec, value, cronRule, now, gone) {
  const start = spec.start === undefined ? undefined : Math.ceil(spec.start);
  const rule = spec.kind === "every" ? { every: spec.every } : { cron: spec.cron, timezone: spec.timezone };
  const history = {
    last: old?.last ?? null,
    began: old?.began ?? null,
    runs: old?.runs ?? 0,
    skipped: old?.skipped ?? 0,
  };
  const limits = { maxRuns: spec.maxRuns ?? null, stopAt: spec.stopAt ?? null, paused: old?.paused ?? false };
  const common = { id: spec.id, ...rule, catchUp: spec.catchUp, overlap: spec.overlap, value, ...history, ...limits };
  const ended = (due) => endsAt({ maxRuns: spec.maxRuns, stopAt: spec.stopAt }, history.runs, due);
  const sameRule =
    old !== undefined &&
    old.every === spec.every &&
    old.cron === spec.cron &&
    old.timezone === spec.timezone &&
    (start === undefined || start === old.start);
  const same = sameRule && old.due !== null && gone === undefined;
  if (same && !ended(/** @type {number} */ (old.due)))
    return { schedule: { ...common, start: old.start, due: old.due, rule: old.rule }, first: undefined };
  const after = Math.max(old?.last == null ? Number.NEGATIVE_INFINITY : old.last + 1, (gone ?? -Infinity) + 1);
  let occurrences;
  let from;
  let origin;
  if (spec.kind === "every") {
    // The same rule keeps its phase.
    origin =
      start ??
      (sameRule
        ? /** @type {number} */ (old.start)
        : defaultStart(now, /** @type {number} */ (spec.every), "rule.every"));
    occurrences = new EveryRule(/** @type {number} */ (spec.every), origin);
    from = Math.max(now, after);
  } else {
    origin = start ?? (sameRule ? old.start : null);
    occurrences = /** @type {NonNullable<typeof cronRule>} */ (cronRule);
    from = Math.max(start === undefined ? now + 1 : Math.max(start, now), after);
  }
  const first = firstOccurrence(occurrences, from, start !== undefined ? "start" : `rule.${spec.kind}`);
  if (old === undefined && spec.stopAt !== undefined && first > spec.stopAt) throw stopAtBefore(spec.stopAt, first);
  // A schedule whose limits are reached (schedule() again with a lower maxRuns or an earlier stopAt) ends.
  if (ended(first)) return { schedule: { ...common, start: origin, due: null, rule: occurrences }, first: null };
  // A paused one keeps waiting for its first occurrence, with no item for it.
  return { schedule: { ...common, start: origin, due: first, rule: occurrences }, first: limits.paused ? null : first };
}

/**
 * What handing out schedule `s`'s pending occurrence at `now` does (catchUp): `run`, the
 * occurrence that runs (its own due time, the latest missed one for "one", undefined for
 * "none"), and `schedule`, the schedule after it (`due` its next pending occurrence, null
 * when the rule has no more).
 *
 * `retrying`: the schedule's latest run waits for its retry. A run lasts until it is done or
 * dead, its retries included, so with overlap false an occurrence that came due after that
 * run began is skipped (counted), as on Redis; one due before it began (a catch-up "all")
 * runs, since deliver() runs one handler at a time and it cannot run beside the retry.
 * @param {DurableSchedule} s
 * @param {number} now
 * @param {boolean} [retrying]
 */
export function occurrenceStep(s, now, retrying = false) {
  let { run, next } = catchUp(s.rule, /** @type {number} */ (s.due), now, s.catchUp);
  if (s.stopAt !== null && run !== undefined && run > s.stopAt) run = undefined; // a catch-up "one" past the end
  const schedule = { ...s, due: next ?? null };
  if (run !== undefined && retrying && !s.overlap && s.began != null && run > s.began) {
    run = undefined;
    schedule.skipped = s.skipped + 1;
  }
  if (run !== undefined) Object.assign(schedule, { last: run, began: now, runs: s.runs + 1 });
  if (schedule.due !== null && endsAt(limitsOfStored(schedule), schedule.runs, schedule.due)) schedule.due = null;
  return { run, schedule };
}

/** The id of `s`'s pending occurrence, or undefined when it has none. @param {DurableSchedule} s */
export function pendingId(s) {
  return s.due === null ? undefined : occurrenceId(s.id, s.due);
}
