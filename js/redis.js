// tarry-queue/redis: a delay queue on Redis shared by many processes, keeping the design of
// the in-memory DelayQueue: one timer per process, re-armed when the head changes.
//
// - Redis decides time: deadlines are epoch ms, and what is due is decided inside Lua with the
//   server's TIME, so clock skew between processes delivers nothing early. A delay counts from
//   the caller's call (its time stamped on the server's clock: js/engine/clock.js).
// - Every change of state is one Lua script (js/redis/lua/, called through js/redis/scripts.js),
//   run by SHA on the connection (js/redis/connection.js).
// - A consuming process keeps ONE local timer for the earliest thing it must act on
//   (js/redis/consumer.js). No polling loop, no blocking command.
// - At least once: a delivered item is leased to its consumer until ack(); an expired lease
//   puts it back (or, after maxAttempts, into the dead letters). Each delivery has a token,
//   so an ack from a delivery whose lease was lost changes nothing and returns false
//   (js/engine/job.js).
//
// Inspection (get, pending and inFlight pages, counts in stats) reads Redis in one script
// each, O(log n + limit) whatever the page (js/redis/inspect.js reads the replies). pause()
// and resume() set a flag the take script honours and tell every consumer on the channel.
//
// Events (an EventTarget, ./engine/events.js): by default, what this process does and sees
// (js/redis/consumer.js). With `observe: true`, the events of every process instead, each
// once and in order, read from a capped stream the scripts append to while some process
// observes (js/redis/observer.js). Metrics go to OpenTelemetry when the application
// registered a MeterProvider (./engine/metrics.js). Nobody listening and no provider cost one
// check per event.
//
// This file is the public class: arguments checked (js/redis/options.js and ./engine/arguments.js)
// before anything is sent, then one script per call. The client is ioredis (an optional peer
// dependency), loaded only when this module is given a URL rather than a client. The
// in-memory entries of tarry-queue never load this file, and this file never loads the wasm.

import { checkSignal, checkTimeout, options } from "./engine/arguments.js";
import { ClosedError, takeUntilClosed } from "./engine/errors.js";
import { EMIT, Emitter, HEARD } from "./engine/events.js";
import { Meters } from "./engine/metrics.js";
import { Inspection } from "./redis/inspect.js";
import { Observer } from "./redis/observer.js";
import { Connection } from "./redis/connection.js";
import { Consumer } from "./redis/consumer.js";
import { Producer } from "./redis/producer.js";
import { checkEviction, keysVanished } from "./redis/durability.js";
import { keysOf } from "./redis/keys.js";
import { processOptions, queueOptions } from "./redis/options.js";
import { ScheduleCalls } from "./schedule/calls.js";
import { RedisSchedules } from "./redis/schedules.js";
import { INNER, ShardedDelayQueue } from "./redis/shards.js";

export { ClosedError } from "./engine/errors.js";
export { OfferManyError } from "./redis/batch-error.js";
export { WaitForReplicasError } from "./redis/durability.js";

/** @typedef {import("./engine/job.js").Job} RedisJob */
/** @typedef {import("./redis/producer.js").Offer} Offer */

/** A Redis-backed delay queue shared by every process that opens the same `name`. */
export class RedisDelayQueue extends Emitter {
  /** @type {import("./redis/options.js").QueueOptions} */
  #options;
  /** @type {Meters} */
  #meters;
  /** @type {Observer | null} the events of every process, when observing */
  #observer = null;
  /** @type {string[]} */
  #keys;
  /** @type {string} */
  #channel;
  /** @type {Connection} */
  #conn;
  /** @type {Consumer} */
  #consumer;
  /** @type {Promise<void> | null} */
  #closing = null;
  /** The schedule calls, checked (js/schedule/calls.js), over js/redis/schedules.js. @type {ScheduleCalls} */
  #scheduling;
  /** The inspection and control calls (js/redis/inspect.js). @type {Inspection} */
  #inspection;
  /** The producing calls (js/redis/producer.js). @type {Producer} */
  #producer;
  /** Whether the server's eviction policy was read (js/redis/durability.js), or is being read. */
  #policyRead = false;

  /**
   * @param {object} opts
   * @param {string | object} [opts.redis] a redis:// URL, ioredis options, or an ioredis
   *   `Redis` or `Cluster` instance (the queue then uses it and a duplicate() for pub/sub)
   * @param {string} opts.name the queue's name: every process that opens it shares its items
   * @param {string} [opts.prefix] prepended to the keys (default "tarry:")
   * @param {number} [opts.visibilityTimeout] ms a delivered item stays leased (default 5000)
   * @param {number} [opts.maxAttempts] deliveries before an item goes to the dead letters (default 5)
   * @param {number} [opts.safetyInterval] ms between checks that cover a missed message (default 5000)
   * @param {number} [opts.clockTolerance] how far back (ms) a call may be stamped (default 1000)
   * @param {(error: unknown) => void} [opts.onerror] errors no call can report (background wake-ups, lease extension)
   * @param {number} [opts.shards] hash tags the queue's items are spread over (default 1: js/redis/shards.js)
   * @param {{ pool: import("./redis/pool.js").Pool }} [shard] internal: this queue is one shard of a
   *   sharded one, its options checked already (its name the shard's tag)
   */
  // biome-ignore lint/correctness/noUnreachableSuper: a sharded queue's face is returned instead of this
  constructor(opts, shard) {
    const o = shard ? /** @type {import("./redis/options.js").QueueOptions} */ (opts) : queueOptions(opts);
    if (!shard && o.shards > 1) {
      // K > 1 is K queues behind one face (js/redis/shards.js), returned instead of this.
      // biome-ignore lint/correctness/noConstructorReturn: see above
      return /** @type {any} */ (new ShardedDelayQueue(o, (so, pool) => new RedisDelayQueue(so, { pool })));
    }
    super((_type, on) => {
      if (on) this.#observer?.start();
    });
    const observe = o.observe;
    this.#options = o;
    const { list, channel } = keysOf(o.prefix, o.name);
    this.#keys = list;
    this.#channel = channel;
    this.#conn = new Connection(o.redis, list, channel, o);
    const schedules = new RedisSchedules(this.#conn, channel);
    const tell = observe ? () => {} : (type, detail) => this.#tell(type, detail);
    const vanished = () => this.#vanished();
    const consumer = new Consumer(this.#conn, o, channel, tell, schedules, vanished, shard?.pool);
    this.#consumer = consumer;
    const open = () => this.#open();
    this.#scheduling = new ScheduleCalls(schedules, open, (head) => consumer.sawHead(head));
    this.#inspection = new Inspection({ conn: this.#conn, channel, consumer, vanished, open });
    this.#meters = new Meters("redis", o.name, () => this.#inspection.counts());
    if (observe)
      this.#observer = new Observer(this.#conn, list, (type, detail) => this.#tell(type, () => detail), o.onerror);
    this.#producer = new Producer({ conn: this.#conn, channel, options: o, consumer, vanished, open });
    if (shard) INNER.set(this, this.#inner());
  }

  /** The queue's keys (all under one hash tag) and its pub/sub channel. */
  get keys() {
    const [items, pending, leased, dead, seq, reasons, meta, events, observed, schedules] = this.#keys;
    return { items, pending, leased, dead, seq, reasons, meta, events, observed, schedules, channel: this.#channel };
  }

  /** The queue's name, as the constructor was given it. */
  get name() {
    return this.#options.name;
  }

  /**
   * Dispatches an event (its detail made only when someone listens) and records it in the
   * metrics when a MeterProvider is registered.
   * @param {string} type
   * @param {() => object} detail
   */
  #tell(type, detail) {
    const heard = this[HEARD](type);
    const meters = this.#meters;
    const on = meters.on;
    if (!heard && !on) return;
    const d = detail();
    if (heard) this[EMIT](type, d);
    if (on) meters.record(type, d);
  }

  // --- producing (js/redis/producer.js) ------------------------------------------------

  /**
   * Offers `value` (JSON data) due `delayMs` after this call. `ifExists` says what happens to
   * an item with the same id: "replace" (default), "keep" or "extend" (docs/semantics.md).
   * Resolves with the id (generated when not given) once Redis has it.
   * @param {unknown} value
   * @param {number} delayMs
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   */
  offer(value, delayMs, opts) {
    return this.#producer.offer(value, delayMs, opts);
  }

  /**
   * Offers `value` due at an absolute wall-clock time (epoch ms or a Date), as the server's clock tells it.
   * @param {unknown} value
   * @param {number | Date} deadline
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   */
  offerAt(value, deadline, opts) {
    return this.#producer.offerAt(value, deadline, opts);
  }

  /**
   * Offers many items: `[{ value, delayMs } | { value, deadline }, with optional id and
   * ifExists]`. Every item is checked before anything is sent; then they go in scripts of up
   * to 500 items (each one atomic), pipelined, and take effect in order (a later item meets
   * what an earlier one left). Resolves with their ids, in order.
   * @param {{ value: unknown, delayMs?: number, deadline?: number | Date, id?: string, ifExists?: "replace" | "keep" | "extend" }[]} items
   */
  offerMany(items) {
    return this.#producer.offerMany(items);
  }

  /** What a sharded queue (js/redis/shards.js) asks of each of its shards beyond the public calls. */
  #inner() {
    return {
      /** @param {Offer[]} items checked */
      send: (items) => this.#producer.send(items),
      consumer: this.#consumer,
      report: (/** @type {unknown} */ e) => this.#conn.report(e),
    };
  }

  /** Removes a pending item. Resolves true if it was pending (not in flight, not dead). @param {string} id */
  cancel(id) {
    return this.#producer.cancel(id);
  }

  /** Gives a pending item a new delay, counted from this call. Resolves true if it was pending. @param {string} id @param {number} delayMs */
  reschedule(id, delayMs) {
    return this.#producer.reschedule(id, delayMs);
  }

  // --- inspecting and control (js/redis/inspect.js) -------------------------------------

  /** Ms until a pending item's deadline by the server's clock (negative when overdue), or undefined. @param {string} id */
  delayOf(id) {
    return this.#inspection.delayOf(id);
  }

  /** The number of pending items (waiting for their deadline, or due and not yet taken). */
  size() {
    return this.#inspection.size();
  }

  /** What Redis holds for the queue, and this process's own figures. */
  stats() {
    return this.#inspection.stats();
  }

  /**
   * What the queue holds under `id`: `{ id, state, value, deadline, attempt }`, with
   * `leaseExpiry` in flight and `reason` and `diedAt` dead; undefined when nothing is there.
   * @param {string} id
   */
  get(id) {
    return this.#inspection.get(id);
  }

  /**
   * A page of pending items in deadline order (FIFO among ties): `{ items, next }`; pass
   * `next` back as `after` for the next page (undefined: none). `limit` 1 to 1000, default
   * 100. One script, O(log n + limit) whatever the page.
   * @param {{ limit?: number, after?: string }} [opts]
   */
  pending(opts) {
    return this.#inspection.pending(opts);
  }

  /**
   * A page of the items handed out and not yet acked, by lease expiry: `{ items, next }`,
   * each with its `leaseExpiry`. Options as pending().
   * @param {{ limit?: number, after?: string }} [opts]
   */
  inFlight(opts) {
    return this.#inspection.inFlight(opts);
  }

  /**
   * Stops deliveries, for every process: the take script hands nothing out while the queue is
   * paused, and every consumer hears it at once on the queue's channel. Offers still land.
   * Resolves true if it was running.
   */
  pause() {
    return this.#inspection.pause();
  }

  /** Lets deliveries run again, for every process. Resolves true if it was paused. */
  resume() {
    return this.#inspection.resume();
  }

  /**
   * A page of dead letters in order of death: `{ items: [{ id, state: "dead", value,
   * deadline, attempt, reason, diedAt, raw? }], next }`; pass `next` back as `after` for the
   * next page (undefined: this was the last). `limit` 1 to 1000, default 100. A page costs
   * O(log n + limit).
   * @param {{ limit?: number, after?: string }} [opts]
   */
  deadLetters(opts) {
    return this.#inspection.deadLetters(opts);
  }

  /** Puts a dead letter back, due now, with its attempts reset. Resolves true if it was dead. @param {string} id */
  retryDead(id) {
    return this.#inspection.retryDead(id);
  }

  /** Removes a dead letter. Resolves true if it was dead. @param {string} id */
  deleteDead(id) {
    return this.#inspection.deleteDead(id);
  }

  /**
   * Removes the dead letters that died at least `olderThan` ms ago by the server's clock
   * (default 0: all), in scripts of up to 1000. Resolves with how many it removed.
   * @param {{ olderThan?: number }} [opts]
   */
  purgeDead(opts) {
    return this.#inspection.purgeDead(opts);
  }

  /** Removes every item of the queue, pending, in flight and dead (deliveries in flight then ack false). */
  clear() {
    return this.#inspection.clear();
  }

  // --- schedules (js/schedule/calls.js, js/redis/schedules.js; docs/schedules.md) --------

  /**
   * Creates the schedule `id`, or updates it: `{ every }` (ms, a fixed rate) or `{ cron,
   * timezone }`, each occurrence an item with `value`, taken like any other (`job.schedule` =
   * `id`, `job.deadline` = its due time). Options: `catchUp` ("one", "all", "none"),
   * `overlap` (default false), `start`, `maxRuns`, `stopAt`. Resolves with the schedule, as
   * schedules() lists it.
   * @param {string} id
   * @param {{ every: number } | { cron: string, timezone?: string }} rule
   * @param {unknown} value
   * @param {{ catchUp?: "one" | "all" | "none", overlap?: boolean, start?: number | Date, maxRuns?: number, stopAt?: number | Date }} [opts]
   */
  schedule(id, rule, value, opts) {
    return this.#scheduling.schedule(id, rule, value, opts);
  }

  /** Removes the schedule `id` and its pending occurrence (a run in flight finishes): true if there was one. @param {string} id */
  unschedule(id) {
    return this.#scheduling.unschedule(id);
  }

  /**
   * Every schedule of the queue, by id: `{ id, every | cron, timezone, start, catchUp,
   * overlap, value, nextRun, lastRun, runs, skipped, maxRuns, stopAt, paused }` (times epoch
   * ms, undefined for none); one that ended stays, with no nextRun.
   */
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
   * The next due item, leased to this process for visibilityTimeout ms: `{ id, value,
   * deadline, attempt, ack(), nack(), extend() }`. With `timeout` (ms) it resolves undefined
   * when that passes; with an AbortSignal it rejects with the signal's reason. A take that
   * ends so leaves its item in the queue.
   * @param {{ signal?: AbortSignal, timeout?: number }} [opts]
   * @returns {Promise<RedisJob | undefined>}
   */
  take(opts) {
    let signal;
    let timeout;
    try {
      ({ signal, timeout } = options(opts, "options", ["signal", "timeout"], "take()"));
      checkSignal(signal, "options.signal");
      checkTimeout(timeout, "options.timeout");
    } catch (e) {
      return Promise.reject(e);
    }
    this.#readPolicy();
    return this.#consumer.take(signal, timeout);
  }

  /**
   * `for await (const job of queue)`: takes jobs until close().
   * @returns {AsyncGenerator<RedisJob, void, unknown>}
   */
  [Symbol.asyncIterator]() {
    // A take without timeout resolves with a job.
    return takeUntilClosed(() => /** @type {Promise<RedisJob>} */ (this.take()));
  }

  /**
   * Runs `handler(value, job)` for each due item, `concurrency` at a time. It acks when the
   * handler resolves and nacks (retry after `retryDelayMs`, a number or `(attempt, error) =>
   * ms`) when it throws; after maxAttempts the item goes to the dead letters. The lease is
   * extended while the handler runs. Returns `{ close() }`: stop taking, let running handlers
   * finish.
   * @param {(value: any, job: RedisJob) => unknown} handler
   * @param {{ concurrency?: number, retryDelayMs?: number | ((attempt: number, error: unknown) => number) }} [opts]
   * @returns {import("./engine/worker.js").Worker}
   */
  process(handler, opts) {
    const { concurrency, retry } = processOptions(handler, opts);
    const worker = this.#consumer.process(handler, concurrency, retry);
    this.#readPolicy();
    return worker;
  }

  /**
   * Stops: waiting takes reject with ClosedError, process() workers finish their running
   * handlers (and ack them), then the connections this queue opened are closed.
   */
  /** @returns {Promise<void>} */
  close() {
    if (this.#closing) return this.#closing;
    this.#meters.close();
    this.#closing = (async () => {
      await this.#consumer.close();
      await this.#observer?.close();
      await this.#conn.close();
      this.#consumer.closed();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }

  #open() {
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
    this.#readPolicy();
  }

  /** A script found the queue's sequence counter gone while its records remained. */
  #vanished() {
    this.#conn.report(keysVanished(this.keys.seq));
  }

  /** Before the queue's first call: whether Redis may evict its keys, said through onerror (once). */
  #readPolicy() {
    if (this.#policyRead || this.#closing) return;
    this.#policyRead = true;
    const conn = this.#conn;
    const get = () => conn.ask("maxmemory-policy", (client) => client.config("GET", "maxmemory-policy"));
    checkEviction(get, (e) => this.#options.onerror(e)).then((known) => {
      if (!known) this.#policyRead = false; // no connection: the next call asks again
    });
  }
}

// A sharded queue is one (js/redis/shards.js): it has every method of the class, over its shards.
Object.setPrototypeOf(ShardedDelayQueue.prototype, RedisDelayQueue.prototype);
