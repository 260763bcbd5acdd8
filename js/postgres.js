// tarry-queue/postgres: a delay queue in the PostgreSQL database the application already uses,
// keeping the design of the in-memory DelayQueue: one timer per process, re-armed when the
// head changes.
//
// - Transactional: offer, cancel and reschedule take the caller's `client`, and then run
//   inside whatever transaction it has open: a rollback leaves no item and no wake-up (NOTIFY
//   is sent at commit). A client with no transaction open runs each call as its own
//   transaction (autocommit), as any statement on it does.
// - The server decides time: deadlines are epoch ms by clock_timestamp() in the statement
//   that decides what is due, so no client's clock delivers anything early. A delay counts
//   from the call: the statement is told how long ago (on this process's monotonic clock) the
//   call was made.
// - Every change of state is one statement, most a function of sql/ (./postgres/statements.js
//   names them all), in its own transaction; moves use FOR UPDATE SKIP LOCKED.
// - A consuming process keeps ONE alarm per queue on the process's one host timer
//   (./postgres/consumer.js), woken early by the pool's one LISTEN connection
//   (./postgres/listener.js). No polling loop.
// - At least once: a delivered item is leased to its consumer until ack(); an expired lease
//   puts it back (or, after maxAttempts, into the dead letters). Each delivery has a token.
//
// This file is the public class: arguments checked (./arguments.js, ./redis/options.js and
// ./postgres/options.js, the same checks and messages as the Redis engine) before anything is
// sent. `pg` (an optional peer dependency) is loaded only for a URL. Never loads the wasm.

import { checkId, checkIfExists, checkSignal, checkTimeout, describe, isRevoked, options } from "./arguments.js";
import { ClosedError, takeUntilClosed } from "./errors.js";
import { EMIT, Emitter, HEARD } from "./events.js";
import { newId } from "./ids.js";
import { jsonText } from "./json.js";
import { Meters } from "./metrics.js";
import { Connection } from "./postgres/connection.js";
import { Consumer } from "./postgres/consumer.js";
import { infoOf, seqHex, seqOf } from "./postgres/inspect.js";
import { Listener } from "./postgres/listener.js";
import { migrate } from "./postgres/migrate.js";
import { queueOptions } from "./postgres/options.js";
import { idBytes, statementsOf } from "./postgres/statements.js";
import { localNow } from "./redis/clock.js";
import { inFlightCursor, pageOptions, pendingCursor } from "./redis/inspect.js";
import {
  checkCursor,
  checkDeadline,
  checkDelay,
  checkLimit,
  cursorOf,
  JSON_RULES,
  processOptions,
} from "./redis/options.js";
import { RedisJob } from "./redis/job.js";
import { Worker } from "./redis/worker.js";

export { ClosedError } from "./errors.js";
export { PostgresError } from "./postgres/connection.js";

/** Items per offer statement at most: more are split (each statement atomic, in order). */
const OFFER_BATCH = 1000;
/** Dead letters one purge statement removes at most. */
const PURGE_BATCH = 1000;
const PAGE = 100;
const MODES = { replace: "r", keep: "k", extend: "e" };

/** @typedef {{ id: string, mode: string, kind: "d" | "a", ms: number, json: string }} Offer */

/** A Postgres-backed delay queue shared by every process that opens the same `name` in the same schema. */
export class PostgresDelayQueue extends Emitter {
  #o;
  #st;
  #conn;
  #consumer;
  #meters;
  /** @type {Promise<void> | null} */
  #closing = null;
  /** The nacks in call order: each sent once the one before it is answered, so dead letters die in that order. */
  #nacks = Promise.resolve();
  /** Set once the workers' last acks are in: then job calls reject too. */
  #ended = false;
  /** @type {Set<Worker>} */
  #workers = new Set();

  /**
   * @param {object} opts
   * @param {string | object} [opts.pg] a postgres:// URL or a pg.Pool
   * @param {string} opts.name the queue's name
   * @param {string} [opts.schema] the schema of its tables (default "tarry")
   * @param {number} [opts.visibilityTimeout] ms a delivered item stays leased (default 5000)
   * @param {number} [opts.maxAttempts] deliveries before an item goes to the dead letters (default 5)
   * @param {number} [opts.safetyInterval] ms between the checks that cover a missed notification (default 30000)
   * @param {number} [opts.commandTimeout] ms within which every call settles (default 5000)
   * @param {(error: unknown) => void} [opts.onerror] errors no call can report
   */
  constructor(opts) {
    const o = queueOptions(opts);
    super();
    this.#o = o;
    this.#st = statementsOf(o.schema);
    this.#conn = new Connection(o.pg, o.commandTimeout, o.onerror);
    const conn = this.#conn;
    this.#consumer = new Consumer({
      conn,
      st: this.#st,
      name: o.name,
      o,
      tell: (type, detail) => this.#tell(type, detail),
      listener: async () => Listener.of(await conn.pool, o.onerror),
      ops: {
        ack: (job, token) => this.#ack(job, token),
        nack: (job, token, delayMs, reason) => this.#nack(job, token, delayMs, reason),
        extend: (job, token, ms) => this.#extend(job, token, ms),
      },
      value: (text) => JSON.parse(text),
    });
    this.#meters = new Meters("postgres", o.name, () => this.#counts());
  }

  /** The queue's name. */
  get name() {
    return this.#o.name;
  }

  /** The schema its tables are in. */
  get schema() {
    return this.#o.schema;
  }

  /** @param {string} type @param {() => object} detail */
  #tell(type, detail) {
    const heard = this[HEARD](type);
    const on = this.#meters.on;
    if (!heard && !on) return;
    const d = detail();
    if (heard) this[EMIT](type, d);
    if (on) this.#meters.record(type, d);
    if (type === "error" && !heard) this.#o.onerror(/** @type {any} */ (d).error);
  }

  #open() {
    if (this.#closing) throw new ClosedError("the queue is closed");
  }

  /** A job's ack, nack or extend: allowed while close() waits for the running handlers. */
  #live() {
    if (this.#ended) throw new ClosedError("the queue is closed");
  }

  /** @param {string} what @param {string} text @param {unknown[] | (() => unknown[])} values @param {any} [client] */
  #query(what, text, values, client) {
    return this.#conn.query(what, text, values, client);
  }

  /**
   * Creates or updates the queue's schema (idempotent; safe from many processes at once).
   * Resolves with the migration versions it applied.
   * @returns {Promise<number[]>}
   */
  async migrate() {
    this.#open();
    const pool = await this.#conn.pool;
    const client = await pool.connect();
    client.on("error", () => {});
    try {
      return await migrate(client, this.#o.schema);
    } finally {
      client.release();
    }
  }

  // --- producing ------------------------------------------------------------------------

  /**
   * Offers `value` due `delayMs` after this call; resolves with its id once it is stored
   * (with `client`: written in the client's open transaction, delivered once it commits).
   * @param {unknown} value @param {number} delayMs
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend", client?: any }} [opts]
   */
  async offer(value, delayMs, opts) {
    const at = localNow();
    const ms = checkDelay(delayMs, "delayMs");
    const [item, client] = this.#item(value, "value", opts, "options", "offer()", "d", ms);
    this.#open();
    await this.#send("offer()", [item], at, client);
    return item.id;
  }

  /**
   * Offers `value` due at a wall-clock time (epoch ms or a Date) by the server's clock.
   * @param {unknown} value @param {number | Date} deadline
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend", client?: any }} [opts]
   */
  async offerAt(value, deadline, opts) {
    const at = localNow();
    const ms = checkDeadline(deadline, "deadline");
    const [item, client] = this.#item(value, "value", opts, "options", "offerAt()", "a", ms);
    this.#open();
    await this.#send("offerAt()", [item], at, client);
    return item.id;
  }

  /**
   * Offers many items, every one checked before anything is sent; they take effect in order.
   * With `{ client }` as the second argument, inside the client's open transaction.
   * @param {any[]} items @param {{ client?: any }} [opts]
   * @returns {Promise<string[]>}
   */
  async offerMany(items, opts) {
    const at = localNow();
    const { client } = options(opts, "options", ["client"], "offerMany()");
    checkClient(client);
    if (isRevoked(items) || !Array.isArray(items))
      throw new TypeError(`items must be an array, got ${describe(items)}`);
    const checked = items.map((it, i) => {
      const where = `items[${i}]`;
      if (it === null || typeof it !== "object" || isRevoked(it))
        throw new TypeError(`${where} must be an object, got ${describe(it)}`);
      const o = options(it, where, ["value", "delayMs", "deadline", "id", "ifExists"], "offerMany()");
      if ((o.delayMs === undefined) === (o.deadline === undefined))
        throw new TypeError(`${where} must have exactly one of delayMs and deadline`);
      const [kind, ms] =
        o.delayMs !== undefined
          ? /** @type {const} */ (["d", checkDelay(o.delayMs, `${where}.delayMs`)])
          : /** @type {const} */ (["a", checkDeadline(o.deadline, `${where}.deadline`)]);
      return this.#item(
        o.value,
        `${where}.value`,
        { id: o.id, ifExists: o.ifExists },
        where,
        "offerMany()",
        kind,
        ms,
      )[0];
    });
    this.#open();
    if (client === undefined && checked.length > OFFER_BATCH) {
      // One transaction for all: all or nothing, as with a client.
      await this.#transaction(async (c) => {
        for (let i = 0; i < checked.length; i += OFFER_BATCH)
          await this.#send("offerMany()", checked.slice(i, i + OFFER_BATCH), at, c);
      });
    } else if (checked.length > 0) {
      for (let i = 0; i < checked.length; i += OFFER_BATCH)
        await this.#send("offerMany()", checked.slice(i, i + OFFER_BATCH), at, client);
    }
    return checked.map((it) => it.id);
  }

  /** Runs `body` in a transaction on a client of the pool. @param {(client: any) => Promise<void>} body */
  async #transaction(body) {
    const pool = await this.#conn.pool;
    const client = await pool.connect();
    client.on("error", () => {});
    try {
      await client.query("BEGIN");
      await body(client);
      await client.query("COMMIT");
      client.release();
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(true);
      throw e;
    }
  }

  /**
   * An offer checked: its id (generated when not given), ifExists, the value's JSON text; and the client.
   * @returns {[Offer, any]}
   */
  #item(value, where, opts, optsName, of, kind, ms) {
    const own = optsName === "options";
    const o = own ? options(opts, optsName, ["id", "ifExists", "client"], of) : opts;
    if (own) checkClient(o.client);
    const id = o.id === undefined ? newId() : o.id;
    checkId(id, `${optsName}.id`);
    const ifExists = checkIfExists(o.ifExists, `${optsName}.ifExists`);
    return [{ id, mode: MODES[ifExists], kind, ms, json: jsonText(value, where, JSON_RULES) }, o.client];
  }

  /** @param {string} what @param {Offer[]} items @param {number} at the call's local time @param {any} client */
  async #send(what, items, at, client) {
    const values = () => [
      this.#o.name,
      items.map((it) => idBytes(it.id)),
      items.map((it) => it.json),
      items.map((it) => it.kind),
      items.map((it) => it.ms),
      items.map((it) => it.mode),
      Math.max(0, localNow() - at),
    ];
    const [{ head }] = await this.#query(what, this.#st.offer, values, client);
    // Committed already without a client: this process's consumer hears of the head at once.
    if (client === undefined && head !== null) this.#consumer.sawHead(head);
  }

  /**
   * Removes a pending item: true if it was pending.
   * @param {string} id @param {{ client?: any }} [opts]
   */
  async cancel(id, opts) {
    checkId(id, "id");
    const { client } = options(opts, "options", ["client"], "cancel()");
    checkClient(client);
    this.#open();
    return (await this.#query("cancel()", this.#st.cancel, [this.#o.name, idBytes(id)], client)).length > 0;
  }

  /**
   * A new delay for a pending item, counted from this call: true if it was pending.
   * @param {string} id @param {number} delayMs @param {{ client?: any }} [opts]
   */
  async reschedule(id, delayMs, opts) {
    const at = localNow();
    checkId(id, "id");
    const ms = checkDelay(delayMs, "delayMs");
    const { client } = options(opts, "options", ["client"], "reschedule()");
    checkClient(client);
    this.#open();
    const values = () => [this.#o.name, idBytes(id), ms, Math.max(0, localNow() - at)];
    const [{ found, head }] = await this.#query("reschedule()", this.#st.reschedule, values, client);
    if (client === undefined && head !== null) this.#consumer.sawHead(head);
    return found;
  }

  /** Ms until a pending item's deadline by the server's clock, or undefined. @param {string} id */
  async delayOf(id) {
    checkId(id, "id");
    this.#open();
    const rows = await this.#query("delayOf()", this.#st.delayOf, [this.#o.name, idBytes(id)]);
    return rows.length ? rows[0].delay : undefined;
  }

  /** The number of pending items. */
  async size() {
    this.#open();
    return (await this.#counts()).pending;
  }

  async #counts() {
    const [r] = await this.#query("stats()", this.#st.counts, [this.#o.name]);
    return r;
  }

  /** Counts by state from Postgres, and this process's timer and delivery figures. */
  async stats() {
    this.#open();
    const r = await this.#counts();
    const c = this.#consumer;
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

  // --- consuming ------------------------------------------------------------------------

  /**
   * The next due item, leased to this process; with `timeout`, undefined once that passes.
   * @param {{ signal?: AbortSignal, timeout?: number }} [opts]
   */
  async take(opts) {
    const o = options(opts, "options", ["signal", "timeout"], "take()");
    const signal = checkSignal(o.signal, "options.signal");
    const timeout = o.timeout === undefined ? Number.POSITIVE_INFINITY : checkTimeout(o.timeout);
    this.#open();
    return this.#consumer.take(/** @type {any} */ (signal), timeout);
  }

  /** `for await (const job of queue)`: jobs as they come due, until close(). */
  [Symbol.asyncIterator]() {
    return takeUntilClosed(() => this.take());
  }

  /**
   * Runs handler for each due item, acks on success, nacks (retry after retryDelayMs) on a throw.
   * @param {(value: any, job: RedisJob) => unknown} handler
   * @param {{ concurrency?: number, retryDelayMs?: number | ((attempt: number, error: unknown) => number) }} [opts]
   */
  process(handler, opts) {
    const { concurrency, retry } = processOptions(handler, opts);
    this.#open();
    const worker = new Worker({
      take: (/** @type {AbortSignal} */ signal) => this.#consumer.take(signal, Number.POSITIVE_INFINITY),
      leases: this.#consumer.leases,
      handler,
      concurrency,
      retry,
      maxAttempts: this.#o.maxAttempts,
      onerror: (/** @type {unknown} */ e) => this.#tell("error", () => ({ error: e })),
      ondone: () => this.#workers.delete(worker),
    });
    this.#workers.add(worker);
    return { close: () => worker.close() };
  }

  /** @param {RedisJob} job @param {string} token */
  async #ack(job, token) {
    this.#live();
    const rows = await this.#query("ack()", this.#st.ack, [this.#o.name, [idBytes(job.id)], [token]]);
    if (rows.length) this.#tell("acked", () => ({ id: job.id }));
    return rows.length > 0;
  }

  /** @param {RedisJob} job @param {string} token @param {number} delayMs @param {string} reason */
  async #nack(job, token, delayMs, reason) {
    this.#live();
    const values = [this.#o.name, idBytes(job.id), token, delayMs, JSON.stringify(reason), this.#o.maxAttempts];
    const sent = this.#nacks.then(() => this.#query("nack()", this.#st.nack, values));
    this.#nacks = sent.then(
      () => {},
      () => {},
    );
    const rows = await sent;
    if (rows.length === 0) return false;
    const [{ outcome, deadline }] = rows;
    if (outcome === "d") this.#tell("dead", () => ({ id: job.id, reason }));
    else {
      this.#tell("nacked", () => ({ id: job.id, attempt: job.attempt, delayMs, reason }));
      this.#consumer.sawHead(deadline);
    }
    return true;
  }

  /** @param {RedisJob} job @param {string} token @param {number | undefined} ms */
  async #extend(job, token, ms) {
    this.#live();
    const values = [this.#o.name, idBytes(job.id), token, ms ?? this.#o.visibilityTimeout];
    return (await this.#query("extend()", this.#st.extend, values))[0].expiry !== null;
  }

  // --- inspection and control -----------------------------------------------------------

  /** What the queue holds under `id`, or undefined. @param {string} id */
  async get(id) {
    checkId(id, "id");
    this.#open();
    const rows = await this.#query("get()", this.#st.get, [this.#o.name, idBytes(id)]);
    return rows.length ? infoOf(rows[0]) : undefined;
  }

  /** A page of pending items in deadline order (FIFO among ties). @param {{ limit?: number, after?: string }} [opts] */
  async pending(opts) {
    const { limit, after } = pageOptions(opts, "pending");
    this.#open();
    const a = /** @type {any} */ (after);
    const values = [this.#o.name, a ? Number(a.deadline) : null, a ? seqOf(a.seq) : null, limit + 1];
    const rows = await this.#query("pending()", this.#st.pending, values);
    return page(rows, limit, (r) => pendingCursor({ deadline: String(r.deadline), seq: seqHex(r.seq) }));
  }

  /** A page of the items in flight, by lease expiry. @param {{ limit?: number, after?: string }} [opts] */
  async inFlight(opts) {
    const { limit, after } = pageOptions(opts, "inFlight");
    this.#open();
    const a = /** @type {any} */ (after);
    const values = [this.#o.name, a ? Number(a.expiry) : null, a ? a.id : null, limit + 1];
    const rows = await this.#query("inFlight()", this.#st.inFlight, values);
    return page(rows, limit, (r) => inFlightCursor({ expiry: String(r.expiry), id: r.id.toString("hex") }));
  }

  /** A page of the dead letters in order of death. @param {{ limit?: number, after?: string }} [opts] */
  async deadLetters(opts) {
    const o = options(opts, "options", ["limit", "after"], "deadLetters()");
    const limit = o.limit === undefined ? PAGE : checkLimit(o.limit, "options.limit");
    const after = o.after === undefined ? null : checkCursor(o.after, "options.after");
    if (after && !/^([0-9a-f]{2})+$/.test(after[1]))
      throw new RangeError(
        `options.after must be a cursor that deadLetters() returned as next, got ${describe(o.after)}`,
      );
    this.#open();
    const values = [this.#o.name, after ? Number(after[0]) : null, after ? after[1] : null, limit + 1];
    const rows = await this.#query("deadLetters()", this.#st.dead, values);
    return page(rows, limit, (r) => cursorOf(String(r.died), r.id.toString("hex")));
  }

  /** Stops deliveries for every process: true if it was running. */
  async pause() {
    this.#open();
    return (await this.#query("pause()", this.#st.pause, [this.#o.name]))[0].changed > 0;
  }

  /** Lets deliveries run again, for every process: true if it was paused. */
  async resume() {
    this.#open();
    return (await this.#query("resume()", this.#st.resume, [this.#o.name]))[0].changed > 0;
  }

  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. @param {string} id */
  async retryDead(id) {
    checkId(id, "id");
    this.#open();
    const rows = await this.#query("retryDead()", this.#st.retryDead, [this.#o.name, idBytes(id)]);
    if (rows.length) this.#consumer.sawHead(rows[0].deadline);
    return rows.length > 0;
  }

  /** Removes a dead letter: true if it was dead. @param {string} id */
  async deleteDead(id) {
    checkId(id, "id");
    this.#open();
    return (await this.#query("deleteDead()", this.#st.deleteDead, [this.#o.name, idBytes(id)])).length > 0;
  }

  /** Removes the dead letters at least `olderThan` ms old (default 0: all); resolves to how many. @param {{ olderThan?: number }} [opts] */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkDelay(olderThan, "options.olderThan");
    if (olderThan < 0) throw new RangeError(`options.olderThan must be >= 0, got ${olderThan}`);
    this.#open();
    let total = 0;
    for (;;) {
      const [{ n }] = await this.#query("purgeDead()", this.#st.purgeDead, [this.#o.name, olderThan, PURGE_BATCH]);
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }

  /** Removes every item (pending, in flight and dead) and every schedule. */
  async clear() {
    this.#open();
    await this.#query("clear()", this.#st.clear, [this.#o.name]);
  }

  /** Rejects waiting takes, lets process() handlers finish, gives back the connections it opened. */
  close() {
    this.#closing ??= (async () => {
      const workers = [...this.#workers].map((w) => w.close());
      await this.#consumer.close();
      await Promise.all(workers);
      this.#ended = true;
      this.#meters.close();
      await this.#conn.close();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }
}

/** A page of `limit` rows (one more was read, to know whether a next page exists). */
function page(rows, limit, cursor) {
  const items = rows.slice(0, limit).map(infoOf);
  return { items, next: rows.length > limit ? cursor(rows[limit - 1]) : undefined };
}

/** A `client` option: a pg client (something with query()), or absent. @param {unknown} client */
function checkClient(client) {
  if (client !== undefined && (client === null || typeof (/** @type {any} */ (client).query) !== "function"))
    throw new TypeError(`options.client must be a pg client (from pool.connect()), got ${describe(client)}`);
}
