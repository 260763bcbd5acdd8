// One queue over K hash tags (`shards: K`), so over the primaries of a Redis Cluster: K
// ordinary single-shard queues (each with its own keys, channel, scripts and consumer) behind
// one face, whose consumers share one pool of waiting takes.
//
// - Tags and ids (js/redis/tags.js). Each shard has a hash tag of its own, in its own K-th of
//   the slots; one shard's tag is the name itself: it keeps K (its meta's `shards` field,
//   written by the first probe), and one shard's keys are those of a single-shard queue. A
//   schedule goes to the shard of its id, an item to the shard of its id, an occurrence
//   (`<schedule>@<due>`) to its schedule's. Offers without an id get a random id first, so
//   cancel, reschedule and get by id always find the shard. offerMany sends one script run
//   per shard (per 500 items): atomic per shard, not across them.
// - K checked. Every call of the face waits for the first probe of the keeping shard
//   (js/redis/lua/probe.lua): a queue created with another K refuses every call with an error
//   naming `shards`, and nothing is sent to the other shards. A single-shard queue's probe
//   refuses a queue created with K > 1 the same way.
// - Consuming. The consumers of the K shards share a Pool: one line of waiting takes (take(),
//   and the slots of process() workers: `concurrency` is the slots of the whole queue), one
//   lateness histogram. Each consumer arms for its own head; a take script takes only for the
//   takes no other shard's script has reserved, and when takes wait and several heads are
//   due, the free takes go to the one whose known head is earliest (what its script leaves,
//   to the next when it answers). So within a
//   shard everything holds as for one queue (deadline order, FIFO ties, never early, leases);
//   across shards, an item is handed out before an earlier one of another shard only while
//   both are due.
// - Inspection. Pages merge the K shards' pages in order (deadline, lease expiry, time of
//   death; ties by shard), with a cursor that holds each shard's; a page costs K scripts, and
//   one more per shard whose page was only partly used (its cursor there).
//
// Costs: K channels and K subscriptions; the first call of the face waits one probe; a take
// loop over K consumers arms up to K timers.

import { checkId, checkMs, checkSignal, checkTimeout, options } from "../engine/arguments.js";
import { ClosedError, takeUntilClosed } from "../engine/errors.js";
import { EMIT, Emitter } from "../engine/events.js";
import { checkScheduleId } from "../schedule/spec.js";
import { moment } from "../engine/clock.js";
import { processOptions } from "./options.js";
import { mergedPage } from "./pages.js";
import { Pool } from "./pool.js";
import { checkMany, checkOffer, checkOfferAt } from "./producer.js";
import { scheduleShardOf, shardOf, shardTags } from "./tags.js";
import { Worker } from "../engine/worker.js";

export { shardOf } from "./tags.js";

/**
 * What each shard queue hands its face beyond the public calls (js/redis.js fills it): its
 * offers' sending, its consumer, its onerror.
 * @type {WeakMap<object, any>}
 */
export const INNER = new WeakMap();

/**
 * A RedisDelayQueue with `shards` > 1: the same methods, over K shard queues. `instanceof
 * RedisDelayQueue` holds (js/redis.js sets the prototype).
 */
export class ShardedDelayQueue extends Emitter {
  /** @type {import("./options.js").QueueOptions} */
  #options;
  /** @type {any[]} the shard queues (RedisDelayQueue), by index */
  #shards;
  /** The index of the shard that keeps K (its tag is the name). */
  #home;
  #pool = new Pool();
  /** @type {Promise<void> | null} the keeping shard's first probe */
  #ready = null;
  /** @type {Set<Worker>} */
  #workers = new Set();
  /** @type {Promise<void> | null} */
  #closing = null;
  /** type → the listener forwarding each shard's events of that type */
  #forwards = new Map();

  /**
   * @param {import("./options.js").QueueOptions} o checked, shards > 1
   * @param {(o: import("./options.js").QueueOptions, pool: Pool) => any} make a shard queue
   */
  constructor(o, make) {
    super((type, on) => this.#listening(type, on));
    this.#options = o;
    const tags = shardTags(o.name, o.shards);
    this.#home = tags.indexOf(o.name);
    this.#shards = tags.map((tag, i) => make({ ...o, name: tag, shards: i === this.#home ? o.shards : 0 }, this.#pool));
    this.#pool.consumers = this.#shards.map((s) => INNER.get(s).consumer);
  }

  /** @param {string} type @param {boolean} on */
  #listening(type, on) {
    if (on) {
      const forward = (/** @type {Event} */ e) => this[EMIT](type, /** @type {CustomEvent} */ (e).detail);
      this.#forwards.set(type, forward);
      for (const s of this.#shards) s.addEventListener(type, forward);
    } else {
      const forward = this.#forwards.get(type);
      this.#forwards.delete(type);
      for (const s of this.#shards) s.removeEventListener(type, forward);
    }
  }

  /** The keys of the shard that keeps K (its tag is the name), and every shard's in `shards`. */
  get keys() {
    return { ...this.#shards[this.#home].keys, shards: this.#shards.map((s) => s.keys) };
  }

  get name() {
    return this.#options.name;
  }

  /** The shard of an item's id (an occurrence's is its schedule's). @param {string} id */
  #of(id) {
    return this.#shards[shardOf(id, this.#shards.length)];
  }

  /** The shard of a schedule's id. @param {string} id */
  #ofSchedule(id) {
    return this.#shards[scheduleShardOf(id, this.#shards.length)];
  }

  #open() {
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
  }

  /** Resolves once the keeping shard's probe found the queue's K (rejects when it was created with another). */
  #gate() {
    this.#open();
    if (!this.#ready) {
      const ready = this.#shards[this.#home].size().then(() => {});
      ready.catch(() => {
        if (this.#ready === ready) this.#ready = null; // the next call probes again
      });
      this.#ready = ready;
    }
    return this.#ready;
  }

  // --- producing ------------------------------------------------------------------------

  /** @param {unknown} value @param {number} delayMs @param {any} [opts] */
  async offer(value, delayMs, opts) {
    const item = checkOffer(value, delayMs, opts, moment());
    await this.#gate();
    await INNER.get(this.#of(item.id)).send([item]);
    return item.id;
  }

  /** @param {unknown} value @param {number | Date} deadline @param {any} [opts] */
  async offerAt(value, deadline, opts) {
    const item = checkOfferAt(value, deadline, opts, moment());
    await this.#gate();
    await INNER.get(this.#of(item.id)).send([item]);
    return item.id;
  }

  /** @param {any[]} items */
  async offerMany(items) {
    const checked = checkMany(items, moment());
    await this.#gate();
    /** @type {Map<any, any[]>} */
    const groups = new Map();
    for (const item of checked) {
      const s = this.#of(item.id);
      const g = groups.get(s);
      if (g) g.push(item);
      else groups.set(s, [item]);
    }
    await Promise.all([...groups].map(([s, g]) => INNER.get(s).send(g)));
    return checked.map((/** @type {{ id: string }} */ it) => it.id);
  }

  /** @param {string} id */
  async cancel(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).cancel(id);
  }

  /** @param {string} id @param {number} delayMs */
  async reschedule(id, delayMs) {
    checkId(id, "id");
    checkMs(delayMs, "delayMs");
    await this.#gate();
    return this.#of(id).reschedule(id, delayMs);
  }

  /** @param {string} id */
  async delayOf(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).delayOf(id);
  }

  async size() {
    await this.#gate();
    const sizes = await Promise.all(this.#shards.map((s) => s.size()));
    return sizes.reduce((a, b) => a + b, 0);
  }

  /** Summed over the shards, with each shard's own in `shards`. */
  async stats() {
    await this.#gate();
    const all = await Promise.all(this.#shards.map((s) => s.stats()));
    const sum = (/** @type {string} */ k, /** @type {any[]} */ of = all) => of.reduce((a, s) => a + s[k], 0);
    const heads = all.map((s) => s.headDelay).filter((d) => d !== undefined);
    const every = all.map((s) => s.all);
    const max = (/** @type {string} */ k) => Math.max(...every.map((a) => a[k]));
    return {
      pending: sum("pending"),
      inFlight: sum("inFlight"),
      dead: sum("dead"),
      paused: all.some((s) => s.paused),
      headDelay: heads.length ? Math.min(...heads) : undefined,
      // This process: the takes and the lateness are the pool's (the same in every shard's).
      takers: all[0].takers,
      timersArmed: sum("timersArmed"),
      timerArms: sum("timerArms"),
      wakes: sum("wakes"),
      earlyWakes: sum("earlyWakes"),
      messages: sum("messages"),
      delivered: sum("delivered"),
      retried: sum("retried"),
      redelivered: sum("redelivered"),
      released: sum("released"),
      latenessP50: all[0].latenessP50,
      latenessP99: all[0].latenessP99,
      latenessMax: all[0].latenessMax,
      all: {
        delivered: sum("delivered", every),
        acked: sum("acked", every),
        nacked: sum("nacked", every),
        redelivered: sum("redelivered", every),
        dead: sum("dead", every),
        // Every process's lateness: the largest of the shards' figures.
        latenessP50: max("latenessP50"),
        latenessP99: max("latenessP99"),
        latenessMax: max("latenessMax"),
      },
      shards: all,
    };
  }

  // --- inspecting -----------------------------------------------------------------------

  /** @param {string} id */
  async get(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).get(id);
  }

  /** @param {any} [opts] */
  pending(opts) {
    return mergedPage(this.#shards, "pending", opts, () => this.#gate());
  }

  /** @param {any} [opts] */
  inFlight(opts) {
    return mergedPage(this.#shards, "inFlight", opts, () => this.#gate());
  }

  /** @param {any} [opts] */
  deadLetters(opts) {
    return mergedPage(this.#shards, "deadLetters", opts, () => this.#gate());
  }

  async pause() {
    await this.#gate();
    return (await Promise.all(this.#shards.map((s) => s.pause()))).some(Boolean);
  }

  async resume() {
    await this.#gate();
    return (await Promise.all(this.#shards.map((s) => s.resume()))).some(Boolean);
  }

  /** @param {string} id */
  async retryDead(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).retryDead(id);
  }

  /** @param {string} id */
  async deleteDead(id) {
    checkId(id, "id");
    await this.#gate();
    return this.#of(id).deleteDead(id);
  }

  /** @param {any} [opts] */
  async purgeDead(opts) {
    const { olderThan = 0 } = options(opts, "options", ["olderThan"], "purgeDead()");
    checkTimeout(olderThan, "options.olderThan");
    await this.#gate();
    const removed = await Promise.all(this.#shards.map((s) => s.purgeDead(opts)));
    return removed.reduce((a, b) => a + b, 0);
  }

  async clear() {
    await this.#gate();
    await Promise.all(this.#shards.map((s) => s.clear()));
  }

  // --- schedules: each on the shard of its id ---------------------------------------------

  /** @param {string} id @param {any} rule @param {unknown} value @param {any} [opts] */
  async schedule(id, rule, value, opts) {
    checkScheduleId(id);
    await this.#gate();
    return this.#ofSchedule(id).schedule(id, rule, value, opts);
  }

  /** @param {string} id */
  async unschedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#ofSchedule(id).unschedule(id);
  }

  /** @param {string} id */
  async pauseSchedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).pauseSchedule(id);
  }

  /** @param {string} id */
  async resumeSchedule(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).resumeSchedule(id);
  }

  /** @param {string} id */
  async trigger(id) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).trigger(id);
  }

  /** @param {string} id @param {number} n */
  async nextRuns(id, n) {
    checkScheduleId(id);
    await this.#gate();
    return this.#of(id).nextRuns(id, n);
  }

  async schedules() {
    await this.#gate();
    const lists = await Promise.all(this.#shards.map((s) => s.schedules()));
    return lists.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  // --- consuming: one pool of takes over the shards ----------------------------------------

  /** @param {{ signal?: AbortSignal, timeout?: number }} [opts] */
  async take(opts) {
    const { signal, timeout } = options(opts, "options", ["signal", "timeout"], "take()");
    checkSignal(signal, "options.signal");
    checkTimeout(timeout, "options.timeout");
    await this.#gate();
    return this.#shards[this.#home].take(opts);
  }

  [Symbol.asyncIterator]() {
    return takeUntilClosed(() => this.take());
  }

  /**
   * `concurrency` slots for the whole queue, each taking from the pool (whichever shard has a
   * due item for it); each job's lease is extended on its own shard.
   * @param {(value: any, job: any) => unknown} handler
   * @param {{ concurrency?: number, retryDelayMs?: number | ((attempt: number, error: unknown) => number) }} [opts]
   */
  process(handler, opts) {
    const { concurrency, retry } = processOptions(handler, opts);
    this.#open();
    const leaseOf = (/** @type {{ id: string }} */ job) => INNER.get(this.#of(job.id)).consumer.leases;
    const worker = new Worker({
      take: (signal) => this.take({ signal }),
      leases: { hold: (job) => leaseOf(job).hold(job), drop: (job) => leaseOf(job).drop(job) },
      handler,
      concurrency,
      retry,
      maxAttempts: this.#options.maxAttempts,
      onerror: (e) => INNER.get(this.#shards[this.#home]).report(e),
      ondone: () => this.#workers.delete(worker),
    });
    this.#workers.add(worker);
    return worker;
  }

  close() {
    if (this.#closing) return this.#closing;
    this.#closing = (async () => {
      await Promise.all([...this.#workers].map((w) => w.close()));
      await Promise.all(this.#shards.map((s) => s.close()));
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
