// The schedules of one RedisDelayQueue: schedule (upsert), unschedule, the listing, and the
// part of a cron schedule's chain that Lua cannot compute. The rules are docs/schedules.md's;
// the chain lives in Redis (js/redis/lua/includes/schedule.lua):
//
// - Each schedule has exactly one pending occurrence, an item of the queue (id
//   `<schedule>@<due>`, value the schedule's). The take script that hands it out places the
//   next one in the same script, so the chain survives any process dying at any point, and
//   Redis restarting from its append-only file: it is all in Redis, moved by atomic scripts.
// - `every` is computed in Lua (a fixed rate, catchUp, overlap), at no cost to any client.
// - cron needs time zones, which Lua cannot compute: the occurrence after the pending one is
//   computed here, by whichever consumer the take script asks (the one that took the previous
//   occurrence, or the one that finds it missing), and the advance script accepts it only
//   while the schedule still waits at the due time, under the version of its rule, it was
//   computed for (compare-and-set): two clients that compute it compute the same instant,
//   and only one of them places it; one computed before schedule() changed the rule is
//   refused.
//   While no client runs, the pending occurrence stays in Redis; the next is placed when a
//   consumer takes it, and catchUp decides then what runs.
//
// Costs: an occurrence of `every` costs its take script a few more commands (the schedule's
// record read and written, the next occurrence placed); one of cron, also one advance script
// from a client, after the occurrence is handed out. schedules() reads the hash in pages.

import { EveryRule, firstOccurrence } from "../schedule/rule.js";
import { cronRuleOf, nextRunsOf, pendingAfterCatchUp, stopAtBefore } from "../schedule/spec.js";
import { SCRIPTS } from "./scripts.js";

/**
 * A schedule as the scripts reply with it.
 * @typedef {object} StoredSchedule
 * @property {string} id
 * @property {"every" | "cron"} kind
 * @property {string} rule the period (ms, as text) or the cron expression
 * @property {number | undefined} start
 * @property {string} timezone
 * @property {string} catchUp
 * @property {boolean} overlap
 * @property {number | undefined} due the pending occurrence
 * @property {number | undefined} last the due time of the latest run
 * @property {number} runs
 * @property {number} skipped
 * @property {number | undefined} maxRuns
 * @property {number | undefined} stopAt
 * @property {boolean} paused
 * @property {string} text the value's JSON text
 */

/**
 * What the take script asks a client to compute for a cron schedule whose pending occurrence
 * is `due`: what it becomes at `now` (catchUp) and the occurrence after that.
 * @typedef {{ id: string, due: string, now: number, expression: string, timezone: string, catchUp: "one" | "all" | "none", version: string }} Need
 */

/** Schedules per page of the listing (HSCAN's COUNT). */
const PAGE = 500;
/**
 * Upserts of a cron schedule tried before giving up: each try after the first starts after
 * the run the script reported, so a second is all a schedule needs unless others race it.
 */
const UPSERT_TRIES = 8;

export class RedisSchedules {
  /** @type {import("./connection.js").Connection} */
  #conn;
  #channel;

  /**
   * @param {import("./connection.js").Connection} conn
   * @param {string} channel the head channel
   */
  constructor(conn, channel) {
    this.#conn = conn;
    this.#channel = channel;
  }

  /**
   * Creates or updates a schedule (its call checked: js/schedule/calls.js); resolves with its info.
   * @param {import("../schedule/calls.js").CheckedSchedule} checked
   */
  async schedule({ spec, json, cron }) {
    const conn = this.#conn;
    // A cron rule is computed here from the server's time: a first timed reply gives this process its clock.
    if (cron !== null && !Number.isFinite(conn.clock.serverNow())) await conn.run(SCRIPTS.stats, undefined);
    const params = {
      channel: this.#channel,
      id: spec.id,
      kind: /** @type {"e" | "c"} */ (spec.kind === "every" ? "e" : "c"),
      rule: spec.kind === "every" ? String(spec.every) : /** @type {string} */ (spec.cron),
      start: spec.start === undefined ? undefined : Math.ceil(spec.start),
      zone: spec.kind === "every" ? "" : /** @type {string} */ (spec.timezone),
      catchUp: spec.catchUp,
      overlap: spec.overlap,
      json,
      maxRuns: spec.maxRuns,
      stopAt: spec.stopAt,
    };
    if (cron === null) {
      const reply = await conn.run(SCRIPTS.scheduleUpsert, params);
      if (reply.status === 3)
        throw stopAtBefore(/** @type {number} */ (spec.stopAt), /** @type {number} */ (reply.last));
      return infoOf(/** @type {StoredSchedule} */ (reply.schedule));
    }
    // cron: its first occurrence at or after the start (by default the first after now, by the
    // server's clock as this process knows it, erring early: then it is due at once, never
    // early), and after the latest run when the schedule had one (the script says).
    let from = Math.max(spec.start ?? Number.NEGATIVE_INFINITY, Math.floor(conn.clock.serverNow()) + 1);
    for (let i = 0; i < UPSERT_TRIES; i++) {
      const first = firstOccurrence(cron, from, spec.start === undefined ? "rule.cron" : "start");
      const reply = await conn.run(SCRIPTS.scheduleUpsert, { ...params, first, succ: cron.next(first) });
      if (reply.status === 3) throw stopAtBefore(/** @type {number} */ (spec.stopAt), first);
      if (reply.schedule !== undefined) return infoOf(reply.schedule);
      from = /** @type {number} */ (reply.last) + 1;
    }
    throw new Error(
      `schedule(): the schedule ${JSON.stringify(spec.id)} moved on under each of ${UPSERT_TRIES} tries (other processes run it fast); nothing changed`,
    );
  }

  /**
   * Removes a schedule and its pending occurrence; resolves true if there was one.
   * @param {string} id
   */
  unschedule(id) {
    return this.#conn.run(SCRIPTS.scheduleRemove, { id });
  }

  /** Pauses the schedule `id` (schedulePause.lua); resolves true if it was running. */
  pause(id) {
    return this.#conn.run(SCRIPTS.schedulePause, { id });
  }

  /** Resumes the schedule `id` (scheduleResume.lua); resolves `{ done, head }`, done true if it was paused. */
  resume(id) {
    return this.#conn.run(SCRIPTS.scheduleResume, { channel: this.#channel, id });
  }

  /** One extra run of the schedule `id` now (scheduleTrigger.lua); resolves `{ done, head }`, done true if it was added. */
  trigger(id) {
    return this.#conn.run(SCRIPTS.scheduleTrigger, { channel: this.#channel, id });
  }

  /**
   * The next `n` occurrences of the schedule `id` (epoch ms), computed here from its rule
   * (spec.js nextRunsOf): the schedule is read, nothing written.
   * @param {string} id
   * @param {number} n
   */
  async nextRuns(id, n) {
    const s = await this.#conn.run(SCRIPTS.scheduleGet, { id });
    if (s === undefined || s.due === undefined) return [];
    const rule =
      s.kind === "every"
        ? new EveryRule(Number(s.rule), /** @type {number} */ (s.start))
        : await cronRuleOf(s.rule, s.timezone);
    return nextRunsOf(rule, s.due, n, { maxRuns: s.maxRuns, stopAt: s.stopAt, runs: s.runs });
  }

  /** Every schedule, by id. */
  async list() {
    const byId = new Map();
    let cursor = "0";
    do {
      const page = await this.#conn.run(SCRIPTS.scheduleList, { cursor, count: PAGE });
      for (const s of page.schedules) byId.set(s.id, s); // HSCAN may return one twice
      cursor = page.cursor;
    } while (cursor !== "0");
    return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(infoOf);
  }

  /**
   * Answers what take scripts asked for cron schedules: each pending occurrence's fate at the
   * take's time and its successor, sent to the advance script (which keeps the first answer
   * for a due time and refuses the others). Resolves with the earliest head a reply saw.
   * @param {Need[]} needs
   */
  async advance(needs) {
    let head = Number.POSITIVE_INFINITY;
    for (const need of needs) {
      const rule = await cronRuleOf(need.expression, need.timezone);
      const { keep, after } = pendingAfterCatchUp(rule, Number(need.due), need.now, need.catchUp);
      const params = { channel: this.#channel, id: need.id, due: need.due, keep, succ: after, version: need.version };
      const reply = await this.#conn.run(SCRIPTS.scheduleAdvance, params);
      head = Math.min(head, reply.head);
    }
    return head;
  }
}

/**
 * A schedule as schedules() and schedule() give it.
 * @param {StoredSchedule} s
 */
function infoOf(s) {
  const rule = s.kind === "every" ? { every: Number(s.rule) } : { cron: s.rule, timezone: s.timezone };
  return {
    id: s.id,
    ...rule,
    start: s.start,
    catchUp: s.catchUp,
    overlap: s.overlap,
    value: JSON.parse(s.text),
    nextRun: s.due,
    lastRun: s.last,
    runs: s.runs,
    skipped: s.skipped,
    maxRuns: s.maxRuns,
    stopAt: s.stopAt,
    paused: s.paused,
  };
}
