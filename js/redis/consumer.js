// The consuming side of one RedisDelayQueue in this process: its waiting takes, its process()
// workers, and the deliveries it hands them, over three roles of their own:
//
// - js/redis/waker.js `Waker`: the ONE alarm (one host timer for every queue of the process),
//   armed for the earliest thing the process must act on (the head while a take waits, a lease
//   expiry, a take's timeout, lease extension, the safety check, a retry), and the take scripts
//   it runs. No polling loop, no blocking command: the take script decides with the server's
//   TIME what is due.
// - `deliver` here: a take reply's items handed to the waiting takes, in call order, in one
//   turn; a value that is not JSON goes to the dead letters, an item whose take left goes back.
// - js/redis/outcomes.js: each delivery's ack, nack and extend by its token, and the leases
//   of running process() handlers, extended while they run.
//
// Events: what this process does and sees goes to `tell` (the queue's events and metrics):
// its deliveries, their acks, nacks and deaths, the expired leases its take script put back,
// pause and resume as the channel says them, and the failures of its wakes (`error`).
//
// Costs: a take or a delivery O(1); arming the timer O(takes waiting with a timeout).
//
// Shards (js/redis/shards.js): the consumers of the K shards of one queue share a `pool`: one
// line of waiting takes and one lateness histogram. A take script takes only for the takes no
// other shard's script has reserved (pool.reserve), so a burst over K shards leases what the
// free slots can run, not K times that; a consumer whose head is due but finds every take
// reserved waits (unarmed for its head) until the pool hands it demand again. Its hooks: head,
// due, leases, demand(); it tells the pool of every take script's answer (pool.unreserve) and
// of every failure (pool.answered).

import { ClosedError } from "../engine/errors.js";
import { Lateness } from "../engine/lateness.js";
import { localNow } from "../engine/clock.js";
import { Job as RedisJob } from "../engine/job.js";
import { Leases, outcomesOf } from "./outcomes.js";
import { SCRIPTS } from "./scripts.js";
import { Takers } from "../engine/takers.js";
import { Waker } from "./waker.js";
import { Worker } from "../engine/worker.js";

/** @typedef {import("../engine/takers.js").Taker} Taker */

export class Consumer {
  /** @type {import("./connection.js").Connection} */
  #conn;
  /** @type {import("./options.js").QueueOptions} */
  #options;
  #channel;
  /** @type {(type: string, detail: () => object) => void} */
  #tell;
  /** Waiting takes, in call order (shared by the shards of a queue: js/redis/shards.js). */
  #takers;
  /** @type {import("./pool.js").Pool | undefined} the shards' shared takes, or none */
  #pool;
  /** The one alarm and the take scripts (js/redis/waker.js). @type {Waker} */
  #waker;
  /** The leases of running process() handlers, extended while they run (js/redis/outcomes.js). @type {Leases} */
  #leases;
  /** What a RedisJob asks of its queue: ack, nack, extend (js/redis/outcomes.js). @type {import("../engine/job.js").JobOps} */
  #jobOps;
  /** @type {Set<Worker>} the workers whose slots still run (closing ones too) */
  #workers = new Set();
  #closing = false;
  #counters = { wakes: 0, earlyWakes: 0, messages: 0, delivered: 0, retried: 0, redelivered: 0, released: 0 };
  #lateness;

  /**
   * @param {import("./connection.js").Connection} conn
   * @param {import("./options.js").QueueOptions} options
   * @param {string} channel the head channel
   * @param {(type: string, detail: () => object) => void} tell an event of this process (its detail made only when heard)
   * @param {{ advance(needs: import("./schedules.js").Need[]): Promise<number> }} schedules what computes cron schedules' occurrences
   * @param {() => void} vanished a script found the queue's sequence counter gone (js/redis/durability.js)
   * @param {import("./pool.js").Pool} [pool] the takes shared with the other shards of the queue
   */
  constructor(conn, options, channel, tell, schedules, vanished, pool) {
    this.#pool = pool;
    this.#takers = pool?.takers ?? new Takers();
    this.#lateness = pool?.lateness ?? new Lateness();
    this.#conn = conn;
    this.#options = options;
    this.#channel = channel;
    this.#tell = tell;
    const sawLeases = (/** @type {number} */ leaseHead) => this.#waker.sawLeases(leaseHead);
    const sawHead = (/** @type {number} */ head) => this.sawHead(head);
    this.#jobOps = outcomesOf({ conn, options, channel, tell, vanished, sawHead, sawLeases });
    this.#leases = new Leases(conn, options.visibilityTimeout, sawLeases, () => this.#waker.arm());
    this.#waker = new Waker({
      owner: this,
      conn,
      options,
      channel,
      tell,
      schedules,
      vanished,
      pool,
      takers: this.#takers,
      free: () => this.#free(),
      leases: this.#leases,
      deliver: (items, now, again) => this.#deliver(items, now, again),
      settle: (taker, settle) => this.#settle(taker, settle),
      closing: () => this.#closing,
      counters: this.#counters,
    });
  }

  /** This process's figures, for stats(). */
  figures() {
    const timer = this.#waker.timer;
    return {
      takers: this.#takers.size,
      timersArmed: timer.armed ? 1 : 0,
      timerArms: timer.arms,
      ...this.#counters,
      latenessP50: this.#lateness.quantile(0.5),
      latenessP99: this.#lateness.quantile(0.99),
      latenessMax: this.#lateness.max,
    };
  }

  /**
   * A take, its arguments checked: resolves with the next due item, leased; with undefined
   * after `timeout` ms; rejects with the signal's reason when aborted, ClosedError when closed.
   * @param {AbortSignal | undefined} signal
   * @param {number | undefined} timeout
   * @returns {Promise<RedisJob | undefined>}
   */
  take(signal, timeout) {
    if (this.#closing) return Promise.reject(new ClosedError("RedisDelayQueue"));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      /** @type {Taker} */
      const taker = { resolve, reject, until: Number.POSITIVE_INFINITY, signal, onAbort: null, done: false };
      if (timeout !== undefined) taker.until = localNow() + timeout;
      if (signal) {
        taker.onAbort = () => this.#leave(taker, () => reject(signal.reason));
        signal.addEventListener("abort", taker.onAbort, { once: true });
      }
      this.#takers.push(taker);
      if (this.#pool) this.#pool.demand();
      else this.#waker.demand();
    });
  }

  // --- the hooks of a shard (js/redis/shards.js) -----------------------------------------

  /** The earliest pending deadline known (server ms), Infinity while paused or unknown. */
  get head() {
    return this.#waker.head;
  }

  /** The leases of running handlers (a sharded queue's workers hold each job's on its own shard). */
  get leases() {
    return this.#leases;
  }

  /** Whether its known head is due and it may take (by the server's clock as this process knows it). */
  get due() {
    return this.#waker.due;
  }

  /**
   * Takes wait in the shared line: start consuming, take what is due, or arm for the head.
   * Returns whether a take script will run for them (now, or next in the running wake).
   */
  demand() {
    if (this.#takers.size === 0 || this.#closing) return false;
    return this.#waker.demand();
  }

  /** Waiting takes that no take script of another shard has reserved (or set aside for it). */
  #free() {
    return this.#pool ? this.#pool.freeFor(this) : this.#takers.size;
  }

  /**
   * Runs `handler(value, job)` for each due item, `concurrency` at a time, as
   * RedisDelayQueue#process documents (its arguments checked).
   * @param {(value: any, job: RedisJob) => unknown} handler
   * @param {number} concurrency
   * @param {(attempt: number, error: unknown) => number} retry
   * @returns {Worker}
   */
  process(handler, concurrency, retry) {
    if (this.#closing) throw new ClosedError("RedisDelayQueue");
    const worker = new Worker({
      take: (signal) => this.take(signal, undefined),
      leases: this.#leases,
      handler,
      concurrency,
      retry,
      maxAttempts: this.#options.maxAttempts,
      onerror: (e) => this.#conn.report(e),
      ondone: () => this.#workers.delete(worker),
    });
    this.#workers.add(worker);
    return worker;
  }

  /**
   * Stops: waiting takes reject with ClosedError, process() workers finish their running
   * handlers (and ack them; their leases are still extended meanwhile), including workers
   * whose close() was called already; a take script on its way finishes (what it leased goes
   * back). The connection stays open for them; closed() ends the rest.
   */
  async close() {
    this.#closing = true;
    for (const t of this.#takers.clear()) this.#settle(t, () => t.reject(new ClosedError("RedisDelayQueue")));
    this.#waker.arm(); // now only for lease extension
    await Promise.all([...this.#workers].map((w) => w.close()));
    await this.#waker.settled();
  }

  /** The connection is closed: the timer stops for good. */
  closed() {
    this.#waker.closed();
  }

  /**
   * A script reply told the head's deadline: keep the earlier of it and what we knew.
   * @param {number} head server ms, Infinity for none
   */
  sawHead(head) {
    this.#waker.sawHead(head);
  }

  /**
   * Hands the items of a take reply to the waiting takes, in order, in this turn; an item whose
   * value is not JSON goes to the dead letters (then `again`: the take script runs again), and
   * one for which no take waits any more goes back to its place. Returns those scripts, on
   * their way.
   * @param {{ id: string, text: string, deadline: number, attempt: number, token: string, schedule: string | undefined }[]} items
   * @param {number} now the server's time of the take script
   * @param {() => void} again
   * @returns {Promise<void>[]}
   */
  #deliver(items, now, again) {
    /** @type {Promise<void>[]} */
    const back = [];
    for (const { id, text, deadline, attempt, token, schedule } of items) {
      let value;
      try {
        value = JSON.parse(text);
      } catch {
        // Not the parser's message: it quotes the text, and a reason is shown where values are hidden.
        const reason = "value is not JSON (the dead letter's raw holds its text)";
        back.push(this.#conn.run(SCRIPTS.bury, { id, token, reason }).then(again));
        continue;
      }
      const taker = this.#takers.shift();
      if (!taker) {
        // The take that asked for it left while the script ran: the item goes back to its place.
        this.#counters.released++;
        back.push(
          this.#conn.run(SCRIPTS.release, { channel: this.#channel, id, token }).then(({ head }) => this.sawHead(head)),
        );
        continue;
      }
      const job = new RedisJob(this.#jobOps, id, value, deadline, attempt, token, schedule);
      this.#lateness.record(now - deadline);
      this.#counters.delivered++;
      if (attempt > 1) this.#counters.retried++;
      this.#tell("delivered", () => ({ id, attempt, deadline, lateness: Math.max(0, now - deadline) }));
      this.#settle(taker, () => taker.resolve(job));
    }
    return back;
  }

  // --- the waiting takes ----------------------------------------------------------------

  /** @param {Taker} taker @param {() => void} settle */
  #leave(taker, settle) {
    if (taker.done) return;
    this.#takers.remove(taker);
    this.#settle(taker, settle);
    this.#waker.arm();
  }

  /** @param {Taker} taker @param {() => void} settle */
  #settle(taker, settle) {
    taker.done = true;
    if (taker.signal) taker.signal.removeEventListener("abort", /** @type {() => void} */ (taker.onAbort));
    settle();
  }
}
