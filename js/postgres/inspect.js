// What PostgresDelayQueue's inspection calls read back: items as get() and the pages show them
// (`ItemInfo` of the engine contract), from the rows of ./statements.js, and the page cursors,
// which every durable engine shares (../engine/cursors.js checks them),
// so that a cursor means the same on both: pending by (deadline, seq as 16 hex digits),
// in flight by (lease expiry, id), dead letters by (time of death, id).

import { describe, options } from "../engine/arguments.js";
import { checkCursor, checkLimit, cursorOf, inFlightCursor, pageOptions, pendingCursor } from "../engine/cursors.js";
import { idOf } from "./consumer.js";

/** A page's default length. */
const PAGE = 100;

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
