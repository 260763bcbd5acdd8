// What RedisDelayQueue's inspection calls send and read back: page options and their opaque
// cursors, items as get() and the pages show them (`ItemInfo` of the engine contract), and the
// figures of every process that the scripts keep in the queue's meta hash.

import { pageOptions as checkPage } from "../arguments.js";
import { Lateness } from "../lateness.js";

/**
 * A page's options, checked (../arguments.js): { limit, after } with `after` one of this
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
 * An item as the contract shows it, from the fields a script replied with.
 * @param {{ id: string, state: string, text: string, deadline?: number | string, attempt: number,
 *   leaseExpiry?: number | string, diedAt?: number | string, why?: string }} r
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
  if (state === "inFlight") info.leaseExpiry = Number(r.leaseExpiry);
  if (state === "dead") {
    let reason = r.why;
    try {
      reason = JSON.parse(r.why ?? "null")?.reason ?? r.why;
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
