// What RedisDelayQueue's inspection calls send and read back: page options and their opaque
// cursors, items as get() and the pages show them (`ItemInfo` of the engine contract), the
// reads themselves (one script each, O(log n + limit) whatever the page), and the figures of
// every process that the scripts keep in the queue's meta hash.

import { Lateness } from "../engine/lateness.js";
import { cursorOf, inFlightCursor, pendingCursor } from "../engine/cursors.js";
import { SCRIPTS } from "./scripts.js";

// Page options and cursors are every durable engine's (../engine/cursors.js).
export { inFlightCursor, pageOptions, pendingCursor } from "../engine/cursors.js";

/** @typedef {import("./connection.js").Connection} Connection */

/** Dead letters one purge script removes at most (purgeDeadLetters runs as many as it takes). */
const PURGE_BATCH = 1000;

/**
 * An item as the contract shows it, from the fields a script replied with.
 * @param {{ id: string, state: string, text: string, deadline?: number | string, attempt: number,
 *   leaseExpiry?: number | string, diedAt?: number | string, why?: string, schedule?: string }} r
 */
export function infoOf(r) {
  const state = { p: "pending", l: "inFlight", d: "dead", x: "dead" }[r.state] ?? "dead";
  /** @type {Record<string, unknown>} */
  const info = { id: r.id, state, value: undefined, deadline: Number(r.deadline), attempt: r.attempt };
  try {
    info.value = JSON.parse(r.text);
  } catch {
    info.raw = r.text; // a record (or value) that does not read: what Redis holds
  }
  if (r.state === "x") info.deadline = undefined;
  if (r.schedule !== undefined) info.schedule = r.schedule;
  if (state === "inFlight") info.leaseExpiry = Number(r.leaseExpiry);
  if (state === "dead") {
    let reason = r.why;
    try {
      const kept = JSON.parse(r.why ?? "null");
      reason = kept?.reason ?? r.why;
      if (typeof kept?.stack === "string") info.stack = kept.stack;
    } catch {
      // kept as it is
    }
    info.reason = reason ?? (r.state === "x" ? "malformed record" : "");
    info.diedAt = r.diedAt === undefined ? undefined : Number(r.diedAt);
  }
  return info;
}

/**
 * The figures of every process, from the queue's meta hash (includes/meta.lua).
 * @param {Record<string, string>} meta
 */
export function allFigures(meta) {
  const n = (/** @type {string} */ k) => Number(meta[k] ?? 0);
  /** @type {[number, number][]} */
  const buckets = [];
  for (const [k, v] of Object.entries(meta)) {
    if (/^l\d+$/.test(k)) buckets.push([Number(k.slice(1)), Number(v)]);
  }
  const lateness = Lateness.of(buckets, n("lmax"));
  return {
    delivered: n("delivered"),
    acked: n("acked"),
    nacked: n("nacked"),
    redelivered: n("redelivered"),
    dead: n("dead"),
    latenessP50: lateness.quantile(0.5),
    latenessP99: lateness.quantile(0.99),
    latenessMax: lateness.max,
  };
}

/**
 * What the queue holds under `id`, or undefined.
 * @param {Connection} conn
 * @param {string} id
 */
export async function readItem(conn, id) {
  const r = await conn.run(SCRIPTS.get, { id });
  return r === undefined ? undefined : infoOf({ id, ...r });
}

/**
 * A page of pending items in deadline order (FIFO among ties), and the cursor of the next.
 * @param {Connection} conn
 * @param {{ limit: number, after: unknown }} page as pageOptions read it
 */
export async function readPending(conn, { limit, after }) {
  const params = { limit, after: /** @type {{ deadline: string, seq: string } | undefined} */ (after) };
  const { more, items } = await conn.run(SCRIPTS.pending, params);
  const last = items[items.length - 1];
  return {
    items: items.map((r) => infoOf({ ...r, state: "p" })),
    next: more && last ? pendingCursor(last) : undefined,
  };
}

/**
 * A page of the items in flight by lease expiry, and the cursor of the next.
 * @param {Connection} conn
 * @param {{ limit: number, after: unknown }} page as pageOptions read it
 */
export async function readInFlight(conn, { limit, after }) {
  const params = { limit, after: /** @type {{ expiry: string, id: string } | undefined} */ (after) };
  const { more, items } = await conn.run(SCRIPTS.inFlight, params);
  const last = items[items.length - 1];
  return {
    items: items.map((r) => infoOf({ ...r, state: "l", leaseExpiry: r.expiry })),
    next: more && last ? inFlightCursor(last) : undefined,
  };
}

/**
 * A page of dead letters in order of death, and the cursor of the next.
 * @param {Connection} conn
 * @param {number} limit
 * @param {any} from the cursor checked (js/redis/options.js checkCursor), or undefined
 * @returns {Promise<{ items: import("../redis.d.ts").DeadLetter[], next: string | undefined }>}
 */
export async function readDeadLetters(conn, limit, from) {
  const { letters, more, last } = await conn.run(SCRIPTS.deadLetters, { limit, from });
  return { items: letters, next: more ? cursorOf(last, letters[letters.length - 1].id) : undefined };
}

/**
 * Removes the dead letters that died at least `olderThan` ms ago by the server's clock, in
 * scripts of up to PURGE_BATCH, all with the first script's cutoff; resolves with how many.
 * @param {Connection} conn
 * @param {number} olderThan
 */
export async function purgeDeadLetters(conn, olderThan) {
  let removed = 0;
  let cutoff = "";
  for (;;) {
    const r = await conn.run(SCRIPTS.purgeDead, { olderThan, cutoff, limit: PURGE_BATCH });
    removed += r.removed;
    cutoff = r.cutoff;
    if (!r.more) return removed;
  }
}
