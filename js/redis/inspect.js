// RedisDelayQueue's inspection and control calls (`Inspection`): delayOf, size, stats, get,
// the pages, pause and resume, the dead letters' retry, delete and purge, and clear, each
// checked, then one script (purgeDead: as many as it takes). What they send and read back:
// page options and their opaque cursors, items as get() and the pages show them (`ItemInfo` of
// the engine contract), the reads themselves (O(log n + limit) whatever the page), and the
// figures of every process that the scripts keep in the queue's meta hash.

import { checkId, checkTimeout, options } from "../engine/arguments.js";
import { Lateness } from "../engine/lateness.js";
import { checkCursor, checkLimit, cursorOf, inFlightCursor, pageOptions, pendingCursor } from "../engine/cursors.js";
import { SCRIPTS } from "./scripts.js";

// Page options and cursors are every durable engine's (../engine/cursors.js).
export { inFlightCursor, pageOptions, pendingCursor } from "../engine/cursors.js";

/** @typedef {import("./connection.js").Connection} Connection */

/** Dead letters one purge script removes at most (purgeDeadLetters runs as many as it takes). */
const PURGE_BATCH = 1000;
/** A page's default length. */
const PAGE = 100;

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

/**
 * What a queue's inspection and control calls need of it: its connection and head channel, its
 * consumer (told of the heads a call places; its figures), `vanished` (a script found the
 * sequence counter gone: js/redis/durability.js) and `open` (throws ClosedError once the queue
 * is closing, and reads the eviction policy before the first call).
 * @typedef {{ conn: Connection, channel: string, consumer: import("./consumer.js").Consumer, vanished: () => void, open: () => void }} Queue
 */

/** The inspection and control calls of one RedisDelayQueue, as js/redis.js documents them. */
export class Inspection {
  /** @type {Queue} */
  #q;

  /** @param {Queue} queue */
  constructor(queue) {
    this.#q = queue;
  }

  /** Ms until a pending item's deadline by the server's clock (negative when overdue), or undefined. @param {string} id */
  async delayOf(id) {
    checkId(id, "id");
    this.#q.open();
    const { now, deadline } = await this.#q.conn.run(SCRIPTS.delayOf, { id });
    return deadline === undefined ? undefined : deadline - now;
  }

  /** The number of pending items. */
  async size() {
    this.#q.open();
    return (await this.#q.conn.run(SCRIPTS.stats, undefined)).pending;
  }

  /**
   * What Redis holds for the queue, and this process's own figures.
   * @returns {Promise<import("../redis.d.ts").RedisQueueStats>}
   */
  async stats() {
    this.#q.open();
    const { now, pending, inFlight, dead, head, meta } = await this.#q.conn.run(SCRIPTS.stats, undefined);
    const headDelay = head === Number.POSITIVE_INFINITY ? undefined : head - now;
    const paused = meta.paused !== undefined;
    return { pending, inFlight, dead, paused, headDelay, ...this.#q.consumer.figures(), all: allFigures(meta) };
  }

  /** Counts by state, for the metrics' gauges. */
  async counts() {
    const { pending, inFlight, dead } = await this.#q.conn.run(SCRIPTS.stats, undefined);
    return { pending, inFlight, dead };
  }

  /** What the queue holds under `id`, or undefined. @param {string} id */
  async get(id) {
    checkId(id, "id");
    this.#q.open();
    return readItem(this.#q.conn, id);
  }

  /** A page of pending items in deadline order (FIFO among ties). @param {{ limit?: number, after?: string }} [opts] */
  async pending(opts) {
    const page = pageOptions(opts, "pending");
    this.#q.open();
    return readPending(this.#q.conn, page);
  }

  /** A page of the items in flight, by lease expiry. @param {{ limit?: number, after?: string }} [opts] */
  async inFlight(opts) {
    const page = pageOptions(opts, "inFlight");
    this.#q.open();
    return readInFlight(this.#q.conn, page);
  }

  /**
   * A page of dead letters in order of death.
   * @param {{ limit?: number, after?: string }} [opts]
   * @returns {Promise<{ items: import("../redis.d.ts").DeadLetter[], next: string | undefined }>}
   */
  async deadLetters(opts) {
    const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], "deadLetters()");
    checkLimit(limit, "options.limit");
    const from = after === undefined ? undefined : checkCursor(after, "options.after");
    this.#q.open();
    return readDeadLetters(this.#q.conn, limit, from);
  }

  /** Stops deliveries for every process: true if it was running. */
  async pause() {
    this.#q.open();
    return this.#q.conn.run(SCRIPTS.pause, { channel: this.#q.channel });
  }

  /** Lets deliveries run again, for every process: true if it was paused. */
  async resume() {
    this.#q.open();
    return this.#q.conn.run(SCRIPTS.resume, { channel: this.#q.channel });
  }

  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. @param {string} id */
  async retryDead(id) {
    checkId(id, "id");
    const q = this.#q;
    q.open();
    const { found, head, vanished } = await q.conn.run(SCRIPTS.retryDead, { channel: q.channel, id });
    if (vanished) q.vanished();
    q.consumer.sawHead(head);
    return found;
  }

  /** Removes a dead letter: true if it was dead. @param {string} id */
  async deleteDead(id) {
    checkId(id, "id");
    this.#q.open();
    return this.#q.conn.run(SCRIPTS.deleteDead, { id });
  }

  /** Removes the dead letters at least `olderThan` ms old (default 0: all); resolves to how many. @param {{ olderThan?: number }} [opts] */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkTimeout(olderThan, "options.olderThan");
    this.#q.open();
    return purgeDeadLetters(this.#q.conn, olderThan);
  }

  /** Removes every item of the queue, pending, in flight and dead. */
  async clear() {
    this.#q.open();
    await this.#q.conn.run(SCRIPTS.clear, undefined);
  }
}
