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
// This file is the public class, over its roles in ./postgres/: the producer (producer.js),
// the consumer (consumer.js, outcomes.js, listener.js), inspection and control (inspect.js),
// schedules (schedules.js), and the SQL (statements.js, migrate.js and sql/). Arguments are
// checked (./engine/arguments.js, ./engine/options.js and ./postgres/options.js, the same
// checks and messages as the Redis engine) before anything is sent. `pg` (an optional peer
// dependency) is loaded only for a URL. Never loads the wasm.

import { ClosedError, takeUntilClosed } from "./engine/errors.js";
import { EMIT, Emitter, HEARD } from "./engine/events.js";
import { Meters } from "./engine/metrics.js";
import { Connection, guard } from "./postgres/connection.js";
import { Consumer } from "./postgres/consumer.js";
import { Inspection } from "./postgres/inspect.js";
import { Listener } from "./postgres/listener.js";
import { migrate } from "./postgres/migrate.js";
import { queueOptions } from "./postgres/options.js";
import { Outcomes } from "./postgres/outcomes.js";
import { Producer } from "./postgres/producer.js";
import { PostgresSchedules } from "./postgres/schedules.js";
import { statementsOf } from "./postgres/statements.js";
import { ScheduleCalls } from "./schedule/calls.js";
import { localNow } from "./engine/clock.js";
import { processOptions, takeOptions } from "./engine/options.js";
import { Job } from "./engine/job.js";
import { Worker } from "./engine/worker.js";

export { ClosedError } from "./engine/errors.js";
export { PostgresError } from "./postgres/connection.js";

/** A Postgres-backed delay queue shared by every process that opens the same `name` in the same schema. */
export class PostgresDelayQueue extends Emitter {
  #o;
  #st;
  #conn;
  #consumer;
  /** The schedule calls, checked (../schedule/calls.js), over ./postgres/schedules.js. @type {ScheduleCalls} */
  #scheduling;
  #meters;
  #producer;
  #inspection;
  /** @type {Promise<void> | null} */
  #closing = null;
  /** Set once the workers' last acks are in: then job calls reject too. */
  #ended = false;
  /** @type {Set<Worker>} */
  #workers = new Set();

  /** @param {object} opts its options, as postgres.d.ts documents them (PostgresDelayQueueOptions; checked: ./postgres/options.js) */
  constructor(opts) {
    const o = queueOptions(opts);
    super();
    this.#o = o;
    this.#st = statementsOf(o.schema, o.preparedStatements);
    this.#conn = new Connection(o.pg, o.commandTimeout, o.onerror);
    const conn = this.#conn;
    const schedules = new PostgresSchedules(conn, this.#st, o.name);
    const outcomes = new Outcomes({
      query: (what, text, values) => this.#query(what, text, values),
      st: this.#st,
      o,
      tell: (type, detail) => this.#tell(type, detail),
      consumer: () => this.#consumer,
      live: () => this.#live(),
    });
    this.#consumer = new Consumer({
      schedules,
      conn,
      st: this.#st,
      name: o.name,
      o,
      tell: (type, detail) => this.#tell(type, detail),
      listener: async () => Listener.of(await conn.pool, o.onerror),
      carry: () => outcomes.carry(),
      ops: outcomes.ops,
      value: (text) => JSON.parse(text),
    });
    const open = () => this.#open();
    /** @type {(what: string, text: string | import("./postgres/statements.js").Prepared, values: any, client?: any) => Promise<any[]>} */
    const query = (what, text, values, client) => this.#query(what, text, values, client);
    this.#producer = new Producer({
      query,
      st: this.#st,
      name: o.name,
      pool: () => conn.pool,
      sawHead: (deadline) => this.#consumer.sawHead(deadline),
      open,
    });
    this.#scheduling = new ScheduleCalls(schedules, open, (head) => this.#consumer.sawHead(head));
    this.#inspection = new Inspection({ query, st: this.#st, name: o.name, consumer: this.#consumer, open });
    this.#meters = new Meters("postgres", o.name, () => this.#inspection.counts());
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

  /** @param {string} what @param {string | import("./postgres/statements.js").Prepared} text @param {unknown[] | (() => unknown[])} values @param {any} [client] */
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
    guard(client);
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
  offer(value, delayMs, opts) {
    return this.#producer.offer("offer()", value, delayMs, opts, localNow());
  }

  /**
   * Offers `value` due at a wall-clock time (epoch ms or a Date) by the server's clock.
   * @param {unknown} value @param {number | Date} deadline
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend", client?: any }} [opts]
   */
  offerAt(value, deadline, opts) {
    return this.#producer.offer("offerAt()", value, deadline, opts, localNow());
  }

  /**
   * Offers many items, every one checked before anything is sent; they take effect in order,
   * all or nothing. With `{ client }`, inside the client's open transaction.
   * @param {any[]} items @param {{ client?: any }} [opts]
   * @returns {Promise<string[]>}
   */
  offerMany(items, opts) {
    return this.#producer.offerMany(items, opts, localNow());
  }

  /**
   * Removes a pending item: true if it was pending.
   * @param {string} id @param {{ client?: any }} [opts]
   */
  cancel(id, opts) {
    return this.#producer.cancel(id, opts);
  }

  /**
   * A new delay for a pending item, counted from this call: true if it was pending.
   * @param {string} id @param {number} delayMs @param {{ client?: any }} [opts]
   */
  reschedule(id, delayMs, opts) {
    return this.#producer.reschedule(id, delayMs, opts, localNow());
  }

  /** Ms until a pending item's deadline by the server's clock, or undefined. @param {string} id */
  delayOf(id) {
    return this.#inspection.delayOf(id);
  }

  /** The number of pending items. */
  size() {
    return this.#inspection.size();
  }

  /** Counts by state from Postgres, and this process's timer and delivery figures. */
  stats() {
    return this.#inspection.stats();
  }

  // --- schedules (../schedule/calls.js: the checks; ./postgres/schedules.js: the SQL) ----------

  /**
   * Creates the schedule `id`, or updates it (its chain goes on when its rule is the same):
   * each occurrence is an item with `value`, with `job.schedule` = `id`.
   * @param {string} id @param {any} rule @param {unknown} value @param {any} [opts]
   */
  schedule(id, rule, value, opts) {
    return this.#scheduling.schedule(id, rule, value, opts);
  }

  /** Removes the schedule `id` and its pending occurrence: true if there was one. @param {string} id */
  unschedule(id) {
    return this.#scheduling.unschedule(id);
  }

  /** Every schedule of the queue, by id. */
  schedules() {
    return this.#scheduling.list();
  }

  /** Places no new occurrence of the schedule `id` until resumeSchedule(): true if it was running. @param {string} id */
  pauseSchedule(id) {
    return this.#scheduling.pause(id);
  }

  /** Places again the occurrence the schedule `id` waited for (catchUp decides): true if it was paused. @param {string} id */
  resumeSchedule(id) {
    return this.#scheduling.resume(id);
  }

  /** One extra run of the schedule `id` now, counted as a run: true if it was added. @param {string} id */
  trigger(id) {
    return this.#scheduling.trigger(id);
  }

  /** The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms), from its rule. @param {string} id @param {number} n */
  nextRuns(id, n) {
    return this.#scheduling.nextRuns(id, n);
  }

  // --- consuming ------------------------------------------------------------------------

  /**
   * The next due item, leased to this process; with `timeout`, undefined once that passes.
   * @param {{ signal?: AbortSignal, timeout?: number }} [opts]
   */
  async take(opts) {
    const o = takeOptions(opts);
    const timeout = o.timeout === undefined ? Number.POSITIVE_INFINITY : o.timeout;
    const signal = o.signal;
    this.#open();
    return this.#consumer.take(/** @type {any} */ (signal), timeout);
  }

  /** `for await (const job of queue)`: jobs as they come due, until close(). */
  [Symbol.asyncIterator]() {
    return takeUntilClosed(() => this.take());
  }

  /**
   * Runs handler for each due item, acks on success, nacks (retry after retryDelayMs) on a throw.
   * @param {(value: any, job: Job) => unknown} handler
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

  // --- inspection and control -----------------------------------------------------------

  /** What the queue holds under `id`, or undefined. @param {string} id */
  get(id) {
    return this.#inspection.get(id);
  }

  /** A page of pending items in deadline order (FIFO among ties). @param {{ limit?: number, after?: string }} [opts] */
  pending(opts) {
    return this.#inspection.page("pending", opts);
  }

  /** A page of the items in flight, by lease expiry. @param {{ limit?: number, after?: string }} [opts] */
  inFlight(opts) {
    return this.#inspection.page("inFlight", opts);
  }

  /** A page of the dead letters in order of death. @param {{ limit?: number, after?: string }} [opts] */
  deadLetters(opts) {
    return this.#inspection.page("deadLetters", opts);
  }

  /** Stops deliveries for every process: true if it was running. */
  pause() {
    return this.#inspection.toggle("pause");
  }

  /** Lets deliveries run again, for every process: true if it was paused. */
  resume() {
    return this.#inspection.toggle("resume");
  }

  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. @param {string} id */
  retryDead(id) {
    return this.#inspection.retryDead(id);
  }

  /** Removes a dead letter: true if it was dead. @param {string} id */
  deleteDead(id) {
    return this.#inspection.deleteDead(id);
  }

  /** Removes the dead letters at least `olderThan` ms old (default 0: all); resolves to how many. @param {{ olderThan?: number }} [opts] */
  purgeDead(opts) {
    return this.#inspection.purgeDead(opts);
  }

  /** Removes every item (pending, in flight and dead) and every schedule. */
  clear() {
    return this.#inspection.clear();
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
