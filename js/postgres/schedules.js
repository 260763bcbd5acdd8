// The schedules of one PostgresDelayQueue: schedule (upsert), unschedule, the listing, the
// controls (pause, resume, trigger, nextRuns), and the cron successors that SQL here does not
// compute. The rules are docs/schedules.md's, through
// the functions every engine shares (../schedule/durable.js plans a schedule() call,
// ../schedule/spec.js checks it and computes catchUp for cron); the chain itself lives in
// sql/002_schedules.sql:
//
// - Each schedule has exactly one pending occurrence, an item with the id '<id>@<due>'. The
//   take statement that hands it out places the next one in the same transaction.
// - `every` is computed in SQL. For cron, the occurrence after the pending one (`succ`) is
//   computed here ahead of time: by schedule() for its first occurrence, then by whichever
//   consumer a take asks (rows 'c'), and placed by advance(), a compare-and-set naming the
//   schedule's version and the due time it was computed for, so two clients that compute it
//   place it once.
// - maxRuns and stopAt end a schedule (spec.js `endsAt`, SQL `ends`): its last run places no
//   next occurrence, and it stays, listed with no next run. A paused schedule keeps `due`, the
//   occurrence it waits for, with no item for it (sql/003_schedule_controls.sql).

import { infoOf, limitsOfStored, planSchedule, scheduleOf } from "../schedule/durable.js";
import { cronRuleOf, endsAt, nextRunsOf, occurrenceId, pendingAfterCatchUp } from "../schedule/spec.js";
import { inTransaction } from "./producer.js";
import { idBytes } from "./statements.js";

/** A schedule's row as ../schedule/durable.js reads a stored schedule. @param {any} row */
function recordOf(row) {
  return {
    every: row.period ?? undefined,
    cron: row.cron ?? undefined,
    timezone: row.zone ?? undefined,
    start: row.start,
    catchUp: row.catch_up,
    overlap: row.overlap,
    value: JSON.parse(row.value),
    due: row.due,
    last: row.last,
    runs: Number(row.runs),
    skipped: Number(row.skipped),
    // NULL, and false, in a row written before migration 3: no limits, not paused.
    maxRuns: row.max_runs === null ? null : Number(row.max_runs),
    stopAt: row.stop_at,
    paused: row.paused,
  };
}

export class PostgresSchedules {
  #conn;
  #st;
  #name;

  /**
   * @param {import("./connection.js").Connection} conn
   * @param {import("./statements.js").Statements} st
   * @param {string} name the queue's
   */
  constructor(conn, st, name) {
    this.#conn = conn;
    this.#st = st;
    this.#name = name;
  }

  /**
   * Creates or updates a schedule in one transaction (its call checked: ../schedule/calls.js);
   * resolves with its info.
   * @param {import("../schedule/calls.js").CheckedSchedule} checked
   */
  async schedule({ spec, json, cron }) {
    const st = this.#st;
    const q = this.#name;
    const sid = idBytes(spec.id);
    let info;
    await inTransaction(await this.#conn.pool, async (c) => {
      const run = async (/** @type {string} */ text, /** @type {unknown[]} */ values) =>
        await this.#conn.query("schedule()", text, values, c);
      const [{ now, first }] = await run(st.scheduleBegin, []);
      const [row] = await run(st.scheduleRow, [q, sid]);
      const old = row ? /** @type {any} */ (await scheduleOf(spec.id, recordOf(row))) : undefined;
      if (row && old === null)
        throw new Error(`schedule(): the stored schedule ${JSON.stringify(spec.id)} does not read`);
      let gone;
      // A paused schedule's occurrence has no item: it is noted, not gone.
      if (old && old.due !== null && !old.paused) {
        const [held] = await run(st.occurrenceHeld, [q, idBytes(occurrenceId(spec.id, old.due)), sid]);
        if (!held) gone = old.due;
      }
      const { schedule: s, first: due } = planSchedule(old, spec, JSON.parse(json), cron, now, gone);
      const version = row === undefined ? 1 : Number(row.version) + (due === undefined ? 0 : 1);
      if (due !== undefined) {
        if (old && old.due !== null) await run(st.unplace, [q, idBytes(occurrenceId(spec.id, old.due)), sid]);
        if (due !== null) await run(st.place, [q, sid, due, json]);
      }
      // An ended schedule's succ is 'infinity': no client is asked for one.
      const succ =
        cron === null || due === undefined
          ? (row?.succ ?? null)
          : s.due === null
            ? Number.POSITIVE_INFINITY
            : (cron.next(s.due) ?? Number.POSITIVE_INFINITY);
      await run(st.scheduleUpsert, [
        q,
        sid,
        s.every !== undefined ? "e" : "c",
        s.every ?? null,
        s.start ?? null,
        s.cron ?? null,
        s.timezone ?? null,
        s.catchUp,
        s.overlap,
        json,
        s.due,
        succ,
        version,
        s.maxRuns,
        s.stopAt,
        s.paused,
      ]);
      await run(st.tellHead, [q, first]);
      info = infoOf(s);
    });
    return /** @type {any} */ (info);
  }

  /** Removes a schedule and its pending occurrence: true if there was one. @param {string} id */
  async unschedule(id) {
    const [{ n }] = await this.#conn.query("unschedule()", this.#st.unschedule, [this.#name, idBytes(id)]);
    return n > 0;
  }

  /** Pauses the schedule `id` (sql/003 pause_schedule): true if it was running. @param {string} id */
  async pause(id) {
    const [{ done }] = await this.#conn.query("pauseSchedule()", this.#st.schedulePause, [this.#name, idBytes(id)]);
    return done;
  }

  /**
   * Resumes the schedule `id`: the occurrence it waited for is placed again, in one
   * transaction. If it came due meanwhile, catchUp decides what runs: for every, the take that
   * hands it out (SQL); for cron, here, as a take's question would be answered (the rule needs
   * time zones). Resolves `{ done, head }`: done true if it was paused, head the due time placed.
   * @param {string} id
   */
  async resume(id) {
    const st = this.#st;
    const q = this.#name;
    const sid = idBytes(id);
    /** @type {{ done: boolean, head: number | undefined }} */
    let out = { done: false, head: undefined };
    await inTransaction(await this.#conn.pool, async (c) => {
      const run = async (/** @type {string} */ text, /** @type {unknown[]} */ values) =>
        await this.#conn.query("resumeSchedule()", text, values, c);
      const [{ now, first }] = await run(st.scheduleBegin, []);
      const [row] = await run(st.scheduleRow, [q, sid]);
      if (!row?.paused) return;
      let { due, succ } = row;
      if (row.kind === "c" && due !== null && due <= now) {
        const s = /** @type {any} */ (await scheduleOf(id, recordOf(row)));
        if (s === null) throw new Error(`resumeSchedule(): the stored schedule ${JSON.stringify(id)} does not read`);
        const { keep, after } = pendingAfterCatchUp(s.rule, due, now, s.catchUp);
        const ended = endsAt(limitsOfStored(s), s.runs, keep);
        due = ended ? null : keep;
        succ = ended ? Number.POSITIVE_INFINITY : (after ?? Number.POSITIVE_INFINITY);
      }
      await run(st.scheduleResumed, [q, sid, due, succ]);
      if (due !== null) await run(st.place, [q, sid, due, row.value]);
      await run(st.tellHead, [q, first]);
      out = { done: true, head: due ?? undefined };
    });
    return out;
  }

  /**
   * One extra run of the schedule `id` now (sql/003 trigger_schedule): `{ done, head }`, done
   * true if it was added, head its due time. @param {string} id
   */
  async trigger(id) {
    const [{ at }] = await this.#conn.query("trigger()", this.#st.scheduleTrigger, [this.#name, idBytes(id)]);
    return { done: at != null, head: at ?? undefined };
  }

  /**
   * The next `n` occurrences of the schedule `id` (epoch ms), from its rule and limits
   * (spec.js nextRunsOf): the schedule is read, nothing written.
   * @param {string} id @param {number} n
   */
  async nextRuns(id, n) {
    const [row] = await this.#conn.query("nextRuns()", this.#st.scheduleGet, [this.#name, idBytes(id)]);
    const s = row === undefined ? null : await scheduleOf(id, recordOf(row));
    if (s === null || s.due === null) return [];
    return nextRunsOf(s.rule, s.due, n, limitsOfStored(s));
  }

  /** Every schedule, by id. */
  async list() {
    const rows = await this.#conn.query("schedules()", this.#st.scheduleList, [this.#name]);
    const out = [];
    for (const row of rows) {
      const s = await scheduleOf(row.id.toString("utf8"), recordOf(row));
      if (s !== null) out.push(infoOf(s));
    }
    return out;
  }

  /**
   * Answers a take's question about a cron schedule (a row 'c'): its pending occurrence's fate
   * at the take's time (catchUp) and the occurrence after it, sent through advance(). Resolves
   * with the occurrence kept pending (server ms), or undefined.
   * @param {any} r
   */
  async answer(r) {
    const { cron, timezone, catchUp } = JSON.parse(r.value);
    const rule = await cronRuleOf(cron, timezone);
    // No pending occurrence (its successor was never computed): the first after the last run.
    const due = r.deadline ?? rule.next(Math.max(r.expiry ?? Number.NEGATIVE_INFINITY, r.at - 1));
    const { keep, after } =
      due === undefined ? { keep: undefined, after: undefined } : pendingAfterCatchUp(rule, due, r.at, catchUp);
    const values = [this.#name, r.id, r.seq, r.deadline, keep ?? null, after ?? null];
    const [{ taken }] = await this.#conn.query("take()", this.#st.advance, values);
    return taken ? keep : undefined;
  }
}
