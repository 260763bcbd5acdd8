// A page's options and its opaque cursors, as every durable engine (js/redis/, js/postgres/)
// reads and writes them: pending pages by (deadline, sequence), in-flight pages by (lease
// expiry, id), dead letters by (time of death, id). A cursor is opaque to callers; a bad one
// gets a TypeError or RangeError naming the argument (./arguments.js).

import { checkLimit, pageOptions as checkPage, readCursor } from "./arguments.js";

/** A page's limit, as every engine checks it (./arguments.js). */
export { checkLimit };

/**
 * A page's options, checked (./arguments.js): { limit, after } with `after` one of this
 * kind's cursors, read.
 * @param {unknown} opts
 * @param {"pending" | "inFlight"} kind
 */
export function pageOptions(opts, kind) {
  return checkPage(opts, `${kind}()`, (text) => {
    const m = (kind === "pending" ? /^p(-?\d+(?:\.\d+)?):([0-9a-f]{16})$/ : /^l(-?\d+(?:\.\d+)?):(.+)$/).exec(text);
    return m && (kind === "pending" ? { deadline: m[1], seq: m[2] } : { expiry: m[1], id: decodeURIComponent(m[2]) });
  });
}

/** @param {{ deadline: string, seq: string }} last */
export const pendingCursor = (last) => `p${last.deadline}:${last.seq}`;

/** @param {{ expiry: string, id: string }} last */
export const inFlightCursor = (last) => `l${last.expiry}:${encodeURIComponent(last.id)}`;

/**
 * A page cursor, as a page's `next` gives it: opaque to callers; here, the time of death and
 * the id of the last dead letter of the page.
 * @param {number | string} diedAt
 * @param {string} id
 */
export function cursorOf(diedAt, id) {
  return `d${diedAt}:${id}`;
}

/**
 * A cursor checked, as the page script takes it: [time of death, id].
 * @param {unknown} cursor
 * @param {string} name
 * @returns {[string, string]}
 */
export function checkCursor(cursor, name) {
  return readCursor(cursor, name, "deadLetters()", (text) => {
    const m = /^d(-?\d+(?:\.\d+)?):([\s\S]+)$/.exec(text);
    return m && /** @type {[string, string]} */ ([m[1], m[2]]);
  });
}
