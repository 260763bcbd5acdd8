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

import { ClosedError, takeUntilClosed } from "./engine/errors.js";
import { EMIT, Emitter, HEARD } from "./engine/events.js";
import { Meters } from "./engine/metrics.js";
import { Inspection } from "./redis/inspect.js";
import { Observer } from "./redis/observer.js";
import { Connection } from "./redis/connection.js";
import { Consumer } from "./redis/consumer.js";
import { Producer } from "./redis/producer.js";
import { evictionReader, keysVanished } from "./redis/durability.js";
import { keysOf } from "./redis/keys.js";
import { processOptions, queueOptions, takeOptions } from "./redis/options.js";
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
  /** Reads the server's eviction policy, until it was read once (js/redis/durability.js). @type {() => void} */
  #policy;

  /**
   * @param {object} opts its options, as redis.d.ts documents them (RedisDelayQueueOptions;
   *   checked: js/redis/options.js); `shards` > 1 returns a sharded queue
   * @param {{ pool: import("./redis/pool.js").Pool }} [shard] internal: a shard of a sharded queue (its name the tag)
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
    this.#policy = evictionReader(this.#conn, o.onerror);
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
   * Offers `value` (JSON data) due `delayMs` after this call; resolves with its id once Redis has it.
   * @param {unknown} value @param {number} delayMs @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   */
  offer(value, delayMs, opts) {
    return this.#producer.offer(value, delayMs, opts);
  }

  /**
   * Offers `value` due at a wall-clock time (epoch ms or a Date), as the server's clock tells it.
   * @param {unknown} value @param {number | Date} deadline @param {{ id?: string, ifExists?: "replace" | "keep" | "extend" }} [opts]
   */
  offerAt(value, deadline, opts) {
    return this.#producer.offerAt(value, deadline, opts);
  }

  /**
   * Offers many items, every one checked before anything is sent, in scripts of up to 500 items
   * (each atomic) that take effect in order; resolves with their ids.
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

  /** What the queue holds under `id` (pending, in flight or dead), or undefined. @param {string} id */
  get(id) {
    return this.#inspection.get(id);
  }

  /** A page of pending items in deadline order (FIFO among ties), O(log n + limit). @param {{ limit?: number, after?: string }} [opts] */
  pending(opts) {
    return this.#inspection.pending(opts);
  }

  /** A page of the items handed out and not yet acked, by lease expiry. @param {{ limit?: number, after?: string }} [opts] */
  inFlight(opts) {
    return this.#inspection.inFlight(opts);
  }

  /** Stops deliveries for every process (each hears it on the channel; offers still land): true if it was running. */
  pause() {
    return this.#inspection.pause();
  }

  /** Lets deliveries run again, for every process. Resolves true if it was paused. */
  resume() {
    return this.#inspection.resume();
  }

  /** A page of dead letters in order of death, O(log n + limit). @param {{ limit?: number, after?: string }} [opts] */
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

  /** Removes the dead letters at least `olderThan` ms old (default 0: all); resolves to how many. @param {{ olderThan?: number }} [opts] */
  purgeDead(opts) {
    return this.#inspection.purgeDead(opts);
  }

  /** Removes every item of the queue, pending, in flight and dead (deliveries in flight then ack false). */
  clear() {
    return this.#inspection.clear();
  }

  // --- schedules (js/schedule/calls.js, js/redis/schedules.js; docs/schedules.md) --------

  /**
   * Creates the schedule `id` (`{ every }` or `{ cron, timezone }`), or updates it: each
   * occurrence an item with `value`, `job.schedule` = `id`. Resolves with the schedule.
   * @param {string} id @param {{ every: number } | { cron: string, timezone?: string }} rule @param {unknown} value
   * @param {{ catchUp?: "one" | "all" | "none", overlap?: boolean, start?: number | Date, maxRuns?: number, stopAt?: number | Date }} [opts]
   */
  schedule(id, rule, value, opts) {
    return this.#scheduling.schedule(id, rule, value, opts);
  }

  /** Removes the schedule `id` and its pending occurrence (a run in flight finishes): true if there was one. @param {string} id */
  unschedule(id) {
    return this.#scheduling.unschedule(id);
  }

  /** Every schedule of the queue, by id; one that ended stays, with no nextRun. */
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
   * The next due item, leased to this process for visibilityTimeout ms; undefined once `timeout`
   * passes, rejects with the signal's reason when aborted (either leaves its item queued).
   * @param {{ signal?: AbortSignal, timeout?: number }} [opts]
   * @returns {Promise<RedisJob | undefined>}
   */
  take(opts) {
    let checked;
    try {
      checked = takeOptions(opts);
    } catch (e) {
      return Promise.reject(e);
    }
    const { signal, timeout } = checked;
    this.#readPolicy();
    return this.#consumer.take(signal, timeout);
  }

  /** `for await (const job of queue)`: takes jobs until close(). @returns {AsyncGenerator<RedisJob, void, unknown>} */
  [Symbol.asyncIterator]() {
    // A take without timeout resolves with a job.
    return takeUntilClosed(() => /** @type {Promise<RedisJob>} */ (this.take()));
  }

  /**
   * Runs `handler(value, job)` for each due item, `concurrency` at a time: acks when it resolves,
   * nacks (retry after `retryDelayMs`) when it throws; the lease is extended while it runs.
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
   * @returns {Promise<void>}
   */
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
    if (!this.#closing) this.#policy();
  }
}

// A sharded queue is one (js/redis/shards.js): it has every method of the class, over its shards.
Object.setPrototypeOf(ShardedDelayQueue.prototype, RedisDelayQueue.prototype);
