// What PostgresDelayQueue's inspection calls read back: items as get() and the pages show them
// (`ItemInfo` of the engine contract), from the rows of ./statements.js, and the page cursors,
// which are those of the Redis engine (../redis/inspect.js and ../redis/options.js check them),
// so that a cursor means the same on both: pending by (deadline, seq as 16 hex digits),
// in flight by (lease expiry, id), dead letters by (time of death, id).

import { idOf } from "./consumer.js";

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
