// What the durable engines' `schedule(id, rule, value, opts)` is given, checked, and what
// both of them share about a schedule: RedisDelayQueue and DurableDelayQueue check the same
// arguments with the same messages, name occurrences the same way, and decide a catch-up the
// same way (rule.js `catchUp`). The rules themselves are rule.js's EveryRule and cron.js's
// CronRule; cron.js (which brings croner) is imported only when a cron schedule needs it.
//
// An occurrence is an item of its queue whose id is `<schedule id>@<due>` (its due time in
// whole epoch ms): deterministic, so that the one pending occurrence of a schedule is named
// by the schedule and its due time alone, and two processes that compute the same
// occurrence name the same item. A schedule's id is therefore at most MAX_SCHEDULE_ID code
// units, so that every occurrence's id is an id (at most MAX_ID_LENGTH).

import { checkBoolean, checkId, describe, instantOf, MAX_ID_LENGTH, options } from "../engine/arguments.js";
import { jsonText } from "../engine/json.js";
import { JSON_RULES } from "../engine/options.js";
import { catchUp, checkCatchUp, checkPeriod, defaultStart, startOf } from "./rule.js";

/** The longest schedule id: room for "@" and a due time (at most 17 characters) in an item id. */
export const MAX_SCHEDULE_ID = MAX_ID_LENGTH - 32;

/** The options schedule() takes. */
const SCHEDULE_OPTIONS = ["catchUp", "overlap", "start", "maxRuns", "stopAt"];

/** The most occurrences nextRuns() computes in one call: its cost does not grow with its argument. */
export const MAX_NEXT_RUNS = 100;

/**
 * The limits every engine's schedules take, checked (a TypeError or RangeError naming the
 * option): `maxRuns`, a whole number ≥ 1, the runs after which the schedule ends (a run
 * now, `trigger()`, counts); `stopAt`, an instant (a Date or epoch ms) after which no
 * occurrence is due: the schedule ends at the last occurrence at or before it. Both
 * undefined when not given.
 * @param {{ maxRuns?: unknown, stopAt?: unknown }} o
 * @returns {{ maxRuns: number | undefined, stopAt: number | undefined }}
 */
export function limitsOf(o) {
  const { maxRuns, stopAt } = o;
  if (maxRuns !== undefined) {
    if (typeof maxRuns !== "number")
      throw new TypeError(`options.maxRuns must be a whole number of runs, got ${describe(maxRuns)}`);
    if (!Number.isSafeInteger(maxRuns) || maxRuns < 1)
      throw new RangeError(
        `options.maxRuns must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, got ${maxRuns}`,
      );
  }
  return { maxRuns, stopAt: stopAt === undefined ? undefined : instantOf(stopAt, "options.stopAt") };
}

/** nextRuns()'s count: a whole number from 1 to MAX_NEXT_RUNS. */
export function checkNextRuns(n) {
  if (typeof n !== "number") throw new TypeError(`n must be a number of occurrences, got ${describe(n)}`);
  if (!Number.isInteger(n) || n < 1 || n > MAX_NEXT_RUNS)
    throw new RangeError(`n must be a whole number from 1 to ${MAX_NEXT_RUNS}, got ${n}`);
}

/**
 * The next `n` occurrences of a schedule (epoch ms), from `first` (its pending occurrence, or
 * undefined for none) on, as its rule and limits say: none after `stopAt`, and no more than
 * the runs `maxRuns` leaves after `runs`. Pure: computed from the rule, O(n) rule steps.
 * @param {{ next(after: number): number | undefined }} rule
 * @param {number | undefined} first
 * @param {number} n
 * @param {{ maxRuns?: number, stopAt?: number, runs: number }} limits
 */
export function nextRunsOf(rule, first, n, { maxRuns, stopAt, runs }) {
  const left = maxRuns === undefined ? n : Math.min(n, Math.max(0, maxRuns - runs));
  const out = [];
  for (let t = first; t !== undefined && out.length < left; t = rule.next(t)) {
    if (stopAt !== undefined && t > stopAt) break;
    out.push(t);
  }
  return out;
}

/**
 * Whether a schedule with these limits has ended once it has made `runs` runs and its next
 * occurrence would be `next` (undefined: its rule has none): maxRuns reached, or `next`
 * after stopAt.
 * @param {{ maxRuns?: number, stopAt?: number }} limits
 * @param {number} runs
 * @param {number | undefined} next
 */
export function endsAt({ maxRuns, stopAt }, runs, next) {
  return next === undefined || (maxRuns !== undefined && runs >= maxRuns) || (stopAt !== undefined && next > stopAt);
}

/** The RangeError for a new schedule whose first occurrence (`first`) is after its stopAt. */
export function stopAtBefore(stopAt, first) {
  return new RangeError(
    `options.stopAt (${new Date(stopAt).toISOString()}) is before the schedule's first occurrence (${new Date(first).toISOString()})`,
  );
}

/**
 * A schedule's arguments, checked.
 * @typedef {object} ScheduleSpec
 * @property {string} id
 * @property {"every" | "cron"} kind
 * @property {number} [every] the period (ms), for kind "every"
 * @property {string} [cron] the expression, for kind "cron"
 * @property {string} [timezone] the IANA time zone, for kind "cron" (default "UTC")
 * @property {number | undefined} start epoch ms, or undefined
 * @property {"one" | "all" | "none"} catchUp
 * @property {boolean} overlap
 * @property {number | undefined} maxRuns
 * @property {number | undefined} stopAt epoch ms
 */

/**
 * The id, rule and options of `schedule(id, rule, value, opts)`, checked; a TypeError or
 * RangeError naming the argument otherwise. A cron expression and its time zone are checked
 * by `ruleOf` (which loads croner).
 * @param {unknown} id
 * @param {unknown} rule `{ every }` or `{ cron, timezone? }`
 * @param {unknown} opts `{ catchUp?, overlap?, start? }`
 * @returns {ScheduleSpec}
 */
export function scheduleSpec(id, rule, opts) {
  checkScheduleId(id);
  const name = /** @type {string} */ (id);
  if (rule === null || typeof rule !== "object")
    throw new TypeError(`rule must be { every } or { cron, timezone }, got ${describe(rule)}`);
  const r = options(rule, "rule", ["every", "cron", "timezone"], "schedule()");
  const o = options(opts, "options", SCHEDULE_OPTIONS, "schedule()");
  const { catchUp = "one", overlap = false } = o;
  checkCatchUp(catchUp);
  checkBoolean(overlap, "options.overlap");
  const start = startOf(o.start);
  const { maxRuns, stopAt } = limitsOf(o);
  if ((r.every === undefined) === (r.cron === undefined))
    throw new TypeError("rule must have exactly one of every and cron");
  if (r.every !== undefined) {
    checkPeriod(r.every, "rule.every");
    if (r.timezone !== undefined) throw new TypeError("rule.timezone goes with cron, not with every");
    if (start === undefined) defaultStart(Date.now(), r.every, "rule.every"); // its first occurrence must be an instant
    return { id: name, kind: "every", every: r.every, start, catchUp, overlap, maxRuns, stopAt };
  }
  if (typeof r.cron !== "string")
    throw new TypeError(`rule.cron must be a cron expression (a string), got ${describe(r.cron)}`);
  const { timezone = "UTC" } = r;
  if (typeof timezone !== "string")
    throw new TypeError(`rule.timezone must be an IANA time zone name (a string), got ${describe(timezone)}`);
  return { id: name, kind: "cron", cron: r.cron, timezone, start, catchUp, overlap, maxRuns, stopAt };
}

/**
 * A durable engine's schedule() call, checked (a TypeError or RangeError naming the argument)
 * before anything is sent: its spec, its value's JSON text (the text checked is the text sent:
 * a getter or Proxy is read once) and, for a cron rule, the rule (loading croner).
 * @param {unknown} id @param {unknown} rule @param {unknown} value @param {unknown} opts
 */
export async function checkScheduleCall(id, rule, value, opts) {
  const spec = scheduleSpec(id, rule, opts);
  const json = jsonText(value, "value", JSON_RULES);
  const cron =
    spec.kind === "cron" ? await cronRuleOf(/** @type {string} */ (spec.cron), spec.timezone ?? "UTC") : null;
  return { spec, json, cron };
}

/** A schedule's id: an id short enough that its occurrences' ids are ids. */
export function checkScheduleId(id, name = "id") {
  checkId(id, name);
  if (id.length > MAX_SCHEDULE_ID)
    throw new RangeError(
      `${name} must be at most ${MAX_SCHEDULE_ID} characters (its occurrences are named "<id>@<due>"), got ${id.length}`,
    );
}

/**
 * What stands between a schedule's id and an occurrence's due time in the occurrence's id.
 * scripts/lua.mjs writes it, and occurrenceId, into the Lua (includes `defs`), so that both
 * languages name occurrences by this one definition.
 */
export const OCCURRENCE_MARK = "@";

/** The id of the occurrence of schedule `id` due at `due` (whole epoch ms). */
export function occurrenceId(id, due) {
  return `${id}${OCCURRENCE_MARK}${due}`;
}

/** The due time of the occurrence whose id is `id` (as occurrenceId made it). */
export function dueOf(id) {
  return Number(id.slice(id.lastIndexOf(OCCURRENCE_MARK) + 1));
}

/**
 * The schedule and due time an id names when it has an occurrence's shape (`<schedule>@<due>`,
 * split at its last "@": a schedule id may hold "@" itself), else undefined.
 * @param {string} id
 * @returns {{ schedule: string, due: number } | undefined}
 */
export function occurrenceOf(id) {
  const at = id.lastIndexOf("@");
  if (at < 1 || !/^-?\d+$/.test(id.slice(at + 1))) return undefined;
  return { schedule: id.slice(0, at), due: Number(id.slice(at + 1)) };
}

/** @type {Promise<typeof import("./cron.js")> | null} */
let cronModule = null;

/** The cron rules (./cron.js, and croner with it), loaded on first use. */
export function cronRules() {
  cronModule ??= import("./cron.js");
  return cronModule;
}

/** Cron rules by expression and zone, so that croner parses each once per process. */
const cronCache = new Map();

/**
 * The cron rule of `expression` in `timezone`, checked (a TypeError or RangeError naming
 * `rule.cron` or `rule.timezone`): loads croner on first use.
 * @param {string} expression
 * @param {string} timezone
 */
export async function cronRuleOf(expression, timezone) {
  const key = `${timezone}\n${expression}`;
  let rule = cronCache.get(key);
  if (rule !== undefined) return rule;
  const { CronRule } = await cronRules();
  try {
    rule = new CronRule(expression, timezone);
  } catch (e) {
    throw new /** @type {any} */ (e).constructor(
      /** @type {Error} */ (e).message.replace(/^(expression|timezone)\b/, (w) =>
        w === "expression" ? "rule.cron" : "rule.timezone",
      ),
    );
  }
  if (cronCache.size >= 1000) cronCache.clear();
  cronCache.set(key, rule);
  return rule;
}

/**
 * What a cron schedule's one pending occurrence becomes at `now`, as catchUp decides
 * (rule.js): `keep`, the occurrence to keep pending (its own due time when on time or
 * catching up "all"; the latest missed one for "one"; the next one for "none"), and `after`,
 * the occurrence after `keep` (undefined when the rule has none). For engines that hand
 * `keep` out when it is due and place `after` then.
 * @param {{ next(after: number): number | undefined, latest(at: number): number | undefined }} rule
 * @param {number} due
 * @param {number} now
 * @param {"one" | "all" | "none"} mode
 */
export function pendingAfterCatchUp(rule, due, now, mode) {
  const { run, next } = catchUp(rule, due, now, mode);
  if (run !== undefined) return { keep: run, after: next };
  return { keep: next, after: next === undefined ? undefined : rule.next(next) };
}
