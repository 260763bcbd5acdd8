// PostgresDelayQueue's inspection and control calls: get, delayOf, size, stats, the pages,
// pause and resume, and the dead letters' retry, delete and purge, and clear. Items read back
// as get() and the pages show them (`ItemInfo` of the engine contract), from the rows of
// ./statements.js; the page cursors are those every durable engine shares
// (../engine/cursors.js checks them), so that a cursor means the same on each: pending by
// (deadline, seq as 16 hex digits), in flight by (lease expiry, id), dead letters by (time of
// death, id).

import { checkId, describe, options } from "../engine/arguments.js";
import { checkCursor, checkLimit, cursorOf, inFlightCursor, pageOptions, pendingCursor } from "../engine/cursors.js";
import { checkDelay } from "../engine/options.js";
import { idOf } from "./consumer.js";
import { idBytes } from "./statements.js";

/** A page's default length. */
const PAGE = 100;

/** Dead letters one purge statement removes at most. */
const PURGE_BATCH = 1000;

const STATES = { p: "pending", l: "inFlight", d: "dead" };

/** @param {string | null} text JSON text of a value or reason */
function parsed(text) {
  return text === null ? undefined : JSON.parse(text);
}

/**
 * An item as the contract shows it.
 * @param {any} r a row with id, state, value, deadline, attempt, and expiry / reason / died by state
 */
export function infoOf(r) {
  const state = STATES[/** @type {"p" | "l" | "d"} */ (r.state)];
  /** @type {Record<string, unknown>} */
  const info = { id: idOf(r.id), state, value: parsed(r.value), deadline: r.deadline, attempt: r.attempt };
  if (state === "inFlight") info.leaseExpiry = r.expiry;
  if (state === "dead") {
    info.reason = parsed(r.reason) ?? "";
    info.diedAt = r.died;
  }
  if (r.schedule) info.schedule = idOf(r.schedule);
  return info;
}

/** A seq (a bigint's decimal text) as the 16 hex digits of a pending cursor. @param {string} seq */
export const seqHex = (seq) => BigInt(seq).toString(16).padStart(16, "0");

/** A pending cursor's seq back as decimal text. @param {string} hex */
export const seqOf = (hex) => BigInt(`0x${hex}`).toString();

/** A page of `limit` rows (one more was read, to know whether a next page exists). */
function page(rows, limit, cursor) {
  const items = rows.slice(0, limit).map(infoOf);
  return { items, next: rows.length > limit ? cursor(rows[limit - 1]) : undefined };
}

/**
 * A page call checked: the statement's parameters after the queue's name, and how its rows
 * become the page. The cursors and their checks are the Redis engine's.
 * @param {"pending" | "inFlight" | "deadLetters"} kind @param {unknown} opts
 * @returns {{ values: unknown[], page: (rows: any[]) => { items: object[], next: string | undefined } }}
 */
export function pageCall(kind, opts) {
  if (kind === "deadLetters") {
    const o = options(opts, "options", ["limit", "after"], "deadLetters()");
    const limit = o.limit === undefined ? PAGE : checkLimit(o.limit, "options.limit");
    const after = o.after === undefined ? null : checkCursor(o.after, "options.after");
    if (after && !/^([0-9a-f]{2})+$/.test(after[1]))
      throw new RangeError(
        `options.after must be a cursor that deadLetters() returned as next, got ${describe(o.after)}`,
      );
    return {
      values: [after ? Number(after[0]) : null, after ? after[1] : null, limit + 1],
      page: (rows) => page(rows, limit, (r) => cursorOf(String(r.died), r.id.toString("hex"))),
    };
  }
  const { limit, after } = pageOptions(opts, kind);
  const a = /** @type {any} */ (after);
  if (kind === "pending")
    return {
      values: [a ? Number(a.deadline) : null, a ? seqOf(a.seq) : null, limit + 1],
      page: (rows) => page(rows, limit, (r) => pendingCursor({ deadline: String(r.deadline), seq: seqHex(r.seq) })),
    };
  return {
    values: [a ? Number(a.expiry) : null, a ? a.id : null, limit + 1],
    page: (rows) => page(rows, limit, (r) => inFlightCursor({ expiry: String(r.expiry), id: r.id.toString("hex") })),
  };
}

/** @typedef {"pending" | "inFlight" | "deadLetters"} PageKind */

export class Inspection {
  #q;

  /**
   * @param {{ query: (what: string, text: string | import("./statements.js").Prepared, values: unknown[]) => Promise<any[]>,
   *   st: import("./statements.js").Statements, name: string,
   *   consumer: import("./consumer.js").Consumer, open: () => void }} q
   */
  constructor(q) {
    this.#q = q;
  }

  /** One statement of the queue's, by id: its rows. @param {string} what @param {string} text @param {unknown} id */
  #byId(what, text, id) {
    checkId(id, "id");
    const q = this.#q;
    q.open();
    return q.query(what, text, [q.name, idBytes(/** @type {string} */ (id))]);
  }

  /** @param {unknown} id */
  async get(id) {
    const rows = await this.#byId("get()", this.#q.st.get, id);
    return rows.length ? infoOf(rows[0]) : undefined;
  }

  /** @param {unknown} id */
  async delayOf(id) {
    const rows = await this.#byId("delayOf()", this.#q.st.delayOf, id);
    return rows.length ? rows[0].delay : undefined;
  }

  /** The counts by state, the head's delay and paused. */
  async counts(what = "stats()") {
    const q = this.#q;
    const [r] = await q.query(what, q.st.counts, [q.name]);
    return r;
  }

  async size() {
    this.#q.open();
    return (await this.counts("size()")).pending;
  }

  /** Counts by state from Postgres, and this process's timer and delivery figures. */
  async stats() {
    this.#q.open();
    const r = await this.counts();
    const c = this.#q.consumer;
    return {
      pending: r.pending,
      inFlight: r.inFlight,
      dead: r.dead,
      headDelay: r.headDelay ?? undefined,
      takers: c.takers,
      timersArmed: c.armed,
      timerArms: c.arms,
      ...c.figures,
      latenessP50: c.lateness.quantile(0.5),
      latenessP99: c.lateness.quantile(0.99),
      latenessMax: c.lateness.max,
      paused: r.paused,
    };
  }

  /** @param {PageKind} kind @param {unknown} opts */
  async page(kind, opts) {
    const { values, page } = pageCall(kind, opts);
    const q = this.#q;
    q.open();
    const text = { pending: q.st.pending, inFlight: q.st.inFlight, deadLetters: q.st.dead }[kind];
    return page(await q.query(`${kind}()`, text, [q.name, ...values]));
  }

  /** pause() or resume(): true if it changed. @param {"pause" | "resume"} what */
  async toggle(what) {
    const q = this.#q;
    q.open();
    return (await q.query(`${what}()`, q.st[what], [q.name]))[0].changed > 0;
  }

  /** @param {unknown} id */
  async retryDead(id) {
    const rows = await this.#byId("retryDead()", this.#q.st.retryDead, id);
    if (rows.length) this.#q.consumer.sawHead(rows[0].deadline);
    return rows.length > 0;
  }

  /** @param {unknown} id */
  async deleteDead(id) {
    return (await this.#byId("deleteDead()", this.#q.st.deleteDead, id)).length > 0;
  }

  /** @param {unknown} opts */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkDelay(olderThan, "options.olderThan");
    if (olderThan < 0) throw new RangeError(`options.olderThan must be >= 0, got ${olderThan}`);
    const q = this.#q;
    q.open();
    let total = 0;
    for (;;) {
      const [{ n }] = await q.query("purgeDead()", q.st.purgeDead, [q.name, olderThan, PURGE_BATCH]);
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }

  async clear() {
    const q = this.#q;
    q.open();
    await q.query("clear()", q.st.clear, [q.name]);
  }
}
