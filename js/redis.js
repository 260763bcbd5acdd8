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

import { checkId, checkSignal, checkTimeout, options } from "./engine/arguments.js";
import { ClosedError, takeUntilClosed } from "./engine/errors.js";
import { EMIT, Emitter, HEARD } from "./engine/events.js";
import { Meters } from "./engine/metrics.js";
import {
  allFigures,
  pageOptions,
  purgeDeadLetters,
  readDeadLetters,
  readInFlight,
  readItem,
  readPending,
} from "./redis/inspect.js";
import { Observer } from "./redis/observer.js";
import { moment } from "./engine/clock.js";
import { Connection } from "./redis/connection.js";
import { Consumer } from "./redis/consumer.js";
import { batchFailed } from "./redis/batch-error.js";
import { checkMany, checkOffer, checkOfferAt, sendOffers } from "./redis/producer.js";
import { checkEviction, keysVanished } from "./redis/durability.js";
import { keysOf } from "./redis/keys.js";
import { checkCursor, checkDelay, checkLimit, processOptions, queueOptions } from "./redis/options.js";
import { checkNextRuns, checkScheduleId } from "./schedule/spec.js";
import { RedisSchedules } from "./redis/schedules.js";
import { SCRIPTS } from "./redis/scripts.js";
import { INNER, ShardedDelayQueue } from "./redis/shards.js";

export { ClosedError } from "./engine/errors.js";
export { OfferManyError } from "./redis/batch-error.js";
export { WaitForReplicasError } from "./redis/durability.js";

/** @typedef {import("./engine/job.js").Job} RedisJob */
/** @typedef {import("./redis/producer.js").Offer} Offer */

/** Items per offer script at most: more are split, so that no script holds Redis for long. */
const OFFER_BATCH = 500;
/** A page's default length. */
const PAGE = 100;

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
  /** The offers made in one turn, gathered: one script per 500 items (each script atomic). @type {import("./engine/batch.js").Batcher<Offer, Offer>} */
  #offers;
  /** schedule(), unschedule(), schedules(), and the cron part of their chains (js/redis/schedules.js). @type {RedisSchedules} */
  #schedules;
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
    this.#schedules = new RedisSchedules(this.#conn, channel);
    const tell = observe ? () => {} : (type, detail) => this.#tell(type, detail);
    const vanished = () => this.#vanished();
    this.#consumer = new Consumer(this.#conn, o, channel, tell, this.#schedules, vanished, shard?.pool);
    this.#meters = new Meters("redis", o.name, () => this.#counts());
    if (observe)
      this.#observer = new Observer(this.#conn, list, (type, detail) => this.#tell(type, () => detail), o.onerror);
    const producer = { conn: this.#conn, channel, options: o, consumer: this.#consumer, vanished };
    this.#offers = this.#conn.batcher(SCRIPTS.offer, OFFER_BATCH, (/** @type {Offer[]} */ items) =>
      sendOffers(producer, items),
    );
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

  /** Counts by state, for the metrics' gauges. */
  async #counts() {
    const { pending, inFlight, dead } = await this.#conn.run(SCRIPTS.stats, undefined);
    return { pending, inFlight, dead };
  }

  // --- producing ------------------------------------------------------------------------

  /**
   * Offers `value` (JSON data) due `delayMs` after this call. `ifExists` says what happens to
   * an item with the same id: "replace" (default), "keep" or "extend" (docs/semantics.md).
   * Resolves with the id (generated when not given) once Redis has it.
   * @param {unknown} value
   * @param {number} delayMs
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   * @returns {Promise<string>}
   */
  async offer(value, delayMs, opts) {
    const item = checkOffer(value, delayMs, opts, moment());
    this.#open();
    await this.#offers.add([item]);
    return item.id;
  }

  /**
   * Offers `value` due at an absolute wall-clock time (epoch ms or a Date), as the server's clock tells it.
   * @param {unknown} value
   * @param {number | Date} deadline
   * @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   * @returns {Promise<string>}
   */
  async offerAt(value, deadline, opts) {
    const item = checkOfferAt(value, deadline, opts, moment());
    this.#open();
    await this.#offers.add([item]);
    return item.id;
  }

  /**
   * Offers many items: `[{ value, delayMs } | { value, deadline }, with optional id and
   * ifExists]`. Every item is checked before anything is sent; then they go in scripts of up
   * to 500 items (each one atomic), pipelined, and take effect in order (a later item meets
   * what an earlier one left). Resolves with their ids, in order.
   * @param {{ value: unknown, delayMs?: number, deadline?: number | Date, id?: string, ifExists?: "replace" | "keep" | "extend" }[]} items
   * @returns {Promise<string[]>}
   */
  async offerMany(items) {
    const checked = checkMany(items, moment());
    this.#open();
    try {
      await this.#offers.add(checked);
    } catch (e) {
      // One script is all or nothing; a batch of several says which of them are stored.
      throw checked.length > OFFER_BATCH ? batchFailed(e, checked) : e;
    }
    return checked.map((it) => it.id);
  }

  /** What a sharded queue (js/redis/shards.js) asks of each of its shards beyond the public calls. */
  #inner() {
    return {
      /** @param {Offer[]} items checked */
      send: (items) => {
        this.#open();
        return this.#offers.add(items);
      },
      consumer: this.#consumer,
      report: (/** @type {unknown} */ e) => this.#conn.report(e),
    };
  }

  /**
   * Removes a pending item. Resolves true if it was pending (not in flight, not dead).
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async cancel(id) {
    checkId(id, "id");
    this.#open();
    return this.#conn.run(SCRIPTS.cancel, { id });
  }

  /**
   * Gives a pending item a new delay, counted from this call. Resolves true if it was pending.
   * @param {string} id
   * @param {number} delayMs
   * @returns {Promise<boolean>}
   */
  async reschedule(id, delayMs) {
    const at = moment();
    checkId(id, "id");
    const ms = checkDelay(delayMs, "delayMs");
    this.#open();
    const params = () => ({
      channel: this.#channel,
      stamp: this.#conn.clock.stamp(at),
      tolerance: this.#options.clockTolerance,
      id,
      kind: /** @type {const} */ ("d"),
      ms,
    });
    const { found, head, vanished } = await this.#conn.run(SCRIPTS.reschedule, params);
    if (vanished) this.#vanished();
    this.#consumer.sawHead(head);
    return found;
  }

  /**
   * Ms until a pending item's deadline by the server's clock (negative when overdue), or undefined.
   * @param {string} id
   * @returns {Promise<number | undefined>}
   */
  async delayOf(id) {
    checkId(id, "id");
    this.#open();
    const { now, deadline } = await this.#conn.run(SCRIPTS.delayOf, { id });
    return deadline === undefined ? undefined : deadline - now;
  }

  /**
   * The number of pending items (waiting for their deadline, or due and not yet taken).
   * @returns {Promise<number>}
   */
  async size() {
    this.#open();
    return (await this.#conn.run(SCRIPTS.stats, undefined)).pending;
  }

  /**
   * What Redis holds for the queue, and this process's own figures.
   * @returns {Promise<import("./redis.d.ts").RedisQueueStats>}
   */
  async stats() {
    this.#open();
    const { now, pending, inFlight, dead, head, meta } = await this.#conn.run(SCRIPTS.stats, undefined);
    const headDelay = head === Number.POSITIVE_INFINITY ? undefined : head - now;
    const paused = meta.paused !== undefined;
    return { pending, inFlight, dead, paused, headDelay, ...this.#consumer.figures(), all: allFigures(meta) };
  }

  // --- inspecting -----------------------------------------------------------------------

  /**
   * What the queue holds under `id`: `{ id, state, value, deadline, attempt }`, with
   * `leaseExpiry` in flight and `reason` and `diedAt` dead; undefined when nothing is there.
   * @param {string} id
   */
  async get(id) {
    checkId(id, "id");
    this.#open();
    return readItem(this.#conn, id);
  }

  /**
   * A page of pending items in deadline order (FIFO among ties): `{ items, next }`; pass
   * `next` back as `after` for the next page (undefined: none). `limit` 1 to 1000, default
   * 100. One script, O(log n + limit) whatever the page.
   * @param {{ limit?: number, after?: string }} [opts]
   */
  async pending(opts) {
    const page = pageOptions(opts, "pending");
    this.#open();
    return readPending(this.#conn, page);
  }

  /**
   * A page of the items handed out and not yet acked, by lease expiry: `{ items, next }`,
   * each with its `leaseExpiry`. Options as pending().
   * @param {{ limit?: number, after?: string }} [opts]
   */
  async inFlight(opts) {
    const page = pageOptions(opts, "inFlight");
    this.#open();
    return readInFlight(this.#conn, page);
  }

  /**
   * Stops deliveries, for every process: the take script hands nothing out while the queue is
   * paused, and every consumer hears it at once on the queue's channel. Offers still land.
   * Resolves true if it was running.
   */
  async pause() {
    this.#open();
    return this.#conn.run(SCRIPTS.pause, { channel: this.#channel });
  }

  /** Lets deliveries run again, for every process. Resolves true if it was paused. */
  async resume() {
    this.#open();
    return this.#conn.run(SCRIPTS.resume, { channel: this.#channel });
  }

  /**
   * A page of dead letters in order of death: `{ items: [{ id, state: "dead", value,
   * deadline, attempt, reason, diedAt, raw? }], next }`; pass `next` back as `after` for the
   * next page (undefined: this was the last). `limit` 1 to 1000, default 100. A page costs
   * O(log n + limit).
   * @param {{ limit?: number, after?: string }} [opts]
   * @returns {Promise<{ items: import("./redis.d.ts").DeadLetter[], next: string | undefined }>}
   */
  async deadLetters(opts) {
    const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], "deadLetters()");
    checkLimit(limit, "options.limit");
    const from = after === undefined ? undefined : checkCursor(after, "options.after");
    this.#open();
    return readDeadLetters(this.#conn, limit, from);
  }

  /**
   * Puts a dead letter back, due now, with its attempts reset. Resolves true if it was dead.
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async retryDead(id) {
    checkId(id, "id");
    this.#open();
    const { found, head, vanished } = await this.#conn.run(SCRIPTS.retryDead, { channel: this.#channel, id });
    if (vanished) this.#vanished();
    this.#consumer.sawHead(head);
    return found;
  }

  /**
   * Removes a dead letter. Resolves true if it was dead.
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async deleteDead(id) {
    checkId(id, "id");
    this.#open();
    return this.#conn.run(SCRIPTS.deleteDead, { id });
  }

  /**
   * Removes the dead letters that died at least `olderThan` ms ago by the server's clock
   * (default 0: all), in scripts of up to 1000. Resolves with how many it removed.
   * @param {{ olderThan?: number }} [opts]
   * @returns {Promise<number>}
   */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkTimeout(olderThan, "options.olderThan");
    this.#open();
    return purgeDeadLetters(this.#conn, olderThan);
  }

  /**
   * Removes every item of the queue, pending, in flight and dead (deliveries in flight then ack false).
   * @returns {Promise<void>}
   */
  async clear() {
    this.#open();
    await this.#conn.run(SCRIPTS.clear, undefined);
  }

  // --- schedules (js/redis/schedules.js; docs/schedules.md) ------------------------------

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
  async schedule(id, rule, value, opts) {
    const checked = await this.#schedules.check(id, rule, value, opts);
    this.#open();
    return this.#schedules.schedule(checked);
  }

  /**
   * Removes the schedule `id` and its pending occurrence (a run in flight finishes). Resolves
   * true if there was one.
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async unschedule(id) {
    checkScheduleId(id);
    this.#open();
    return this.#schedules.unschedule(id);
  }

  /**
   * Every schedule of the queue, by id: `{ id, every | cron, timezone, start, catchUp,
   * overlap, value, nextRun, lastRun, runs, skipped, maxRuns, stopAt, paused }` (times epoch
   * ms, undefined for none); one that ended stays, with no nextRun.
   */
  async schedules() {
    this.#open();
    return this.#schedules.list();
  }

  /** Places no new occurrence of the schedule `id` until resumeSchedule(): true if it was running. @param {string} id */
  async pauseSchedule(id) {
    checkScheduleId(id);
    this.#open();
    return this.#schedules.pause(id);
  }

  /** Places again the occurrence the schedule `id` waited for (catchUp decides): true if it was paused. @param {string} id */
  async resumeSchedule(id) {
    checkScheduleId(id);
    this.#open();
    const { done, head } = await this.#schedules.resume(id);
    this.#consumer.sawHead(head);
    return done;
  }

  /** One extra run of the schedule `id` now, counted as a run: true if it was added. @param {string} id */
  async trigger(id) {
    checkScheduleId(id);
    this.#open();
    const { done, head } = await this.#schedules.trigger(id);
    this.#consumer.sawHead(head);
    return done;
  }

  /** The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms), from its rule. @param {string} id @param {number} n */
  async nextRuns(id, n) {
    checkScheduleId(id);
    checkNextRuns(n);
    this.#open();
    return this.#schedules.nextRuns(id, n);
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
