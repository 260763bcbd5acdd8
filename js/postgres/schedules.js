// The schedules of one PostgresDelayQueue: schedule (upsert), unschedule, the listing, and the
// cron successors that SQL here does not compute. The rules are docs/schedules.md's, through
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

import { jsonText } from "../json.js";
import { JSON_RULES } from "../redis/options.js";
import { infoOf, planSchedule, scheduleOf } from "../schedule/durable.js";
import { cronRuleOf, occurrenceId, pendingAfterCatchUp, scheduleSpec } from "../schedule/spec.js";
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
   * Checks a schedule() call (a TypeError or RangeError naming the argument) before anything is sent.
   * @param {unknown} id @param {unknown} rule @param {unknown} value @param {unknown} opts
   */
  async check(id, rule, value, opts) {
    const spec = scheduleSpec(id, rule, opts);
    const json = jsonText(value, "value", JSON_RULES);
    const cron =
      spec.kind === "cron" ? await cronRuleOf(/** @type {string} */ (spec.cron), spec.timezone ?? "UTC") : null;
    return { spec, json, cron };
  }

  /**
   * Creates or updates a schedule in one transaction; resolves with its info.
   * @param {Awaited<ReturnType<PostgresSchedules["check"]>>} checked
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
      if (old && old.due !== null) {
        const [held] = await run(st.occurrenceHeld, [q, idBytes(occurrenceId(spec.id, old.due)), sid]);
        if (!held) gone = old.due;
      }
      const { schedule: s, first: due } = planSchedule(old, spec, JSON.parse(json), cron, now, gone);
      // Checked as on every engine, then refused rather than ignored (the transaction rolls
      // back): Postgres does not keep them yet.
      for (const k of /** @type {const} */ (["maxRuns", "stopAt"])) {
        if (spec[k] !== undefined)
          throw new TypeError(`options.${k} is not supported by PostgresDelayQueue yet: the schedule was not changed`);
      }
      const version = row === undefined ? 1 : Number(row.version) + (due === undefined ? 0 : 1);
      if (due !== undefined) {
        if (old && old.due !== null) await run(st.unplace, [q, idBytes(occurrenceId(spec.id, old.due)), sid]);
        await run(st.place, [q, sid, due, json]);
      }
      const succ =
        cron === null || due === undefined ? (row?.succ ?? null) : (cron.next(due) ?? Number.POSITIVE_INFINITY);
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
