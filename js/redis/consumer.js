// The consuming side of one RedisDelayQueue in this process: its waiting takes, its process()
// workers, and its ONE alarm (js/engine/alarms.js: the alarms of every queue of the process
// share one host timer), armed for the earliest thing the process must act on:
//
// - the head's deadline, while a take waits (learned from script replies and from the head
//   channel: an offer, reschedule, nack or retry that makes the head earlier publishes it);
// - the earliest lease expiry (an expired lease is put back by the take script);
// - a waiting take's timeout;
// - the lease extension of running process() handlers (every visibilityTimeout / 3);
// - a safety check at least every safetyInterval (at a random point of its last quarter, so
//   that many queues' checks spread out), which covers a missed message;
// - after a failure, the retry (back-off from 100 ms, at most safetyInterval).
//
// No polling loop, no blocking command. What is due is decided by the take script with the
// server's TIME; this process converts server times to its own clock with the bounds of
// js/engine/clock.js, so its timer never fires before the server sees a deadline. A timer that
// fires early (Node's can, by ~1 ms) hands nothing out and is armed again.
//
// The known head only moves later by a take reply, and a take reply never hides what was heard
// while it was on its way: a message (or another script's reply) can tell of an offer that ran
// after the take script did, and arrive before its reply, which then knows nothing of it. So
// the head a take reply leaves is the earlier of its own and of every head heard since that
// take was called.
//
// Paused (the queue's pause(), by any process): the take script hands nothing out and says so,
// and the channel carries "paused" and "resumed", so that no consumer arms its timer for a
// head it may not take until it hears "resumed" (or a later take reply says so).
//
// Events: what this process does and sees goes to `tell` (the queue's events and metrics):
// its deliveries, their acks, nacks and deaths, the expired leases its take script put back,
// pause and resume as the channel says them, and the failures of its wakes (`error`).
//
// A take script takes for every take waiting (up to TAKE_BATCH), and a reply's items are handed
// out in one turn; the next take script waits for the turn's I/O callbacks to run first
// (setImmediate), so that the process() slots whose handlers returned meanwhile are waiting
// again and their acks gathered: a burst costs one take and one ack script per free slots.
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

import { randomFillSync } from "node:crypto";
import { setImmediate } from "node:timers";
import { ClosedError } from "../engine/errors.js";
import { Lateness } from "../engine/lateness.js";
import { Alarm } from "../engine/alarms.js";
import { localNow, moment } from "../engine/clock.js";
import { isLasting } from "./errors.js";
import { Job as RedisJob } from "../engine/job.js";
import { SCRIPTS } from "./scripts.js";
import { Takers } from "../engine/takers.js";
import { Worker } from "../engine/worker.js";

/** Items per ack script at most: more are split, so that no script holds Redis for long. */
const ACK_BATCH = 500;
/** Items one take script hands out at most. */
const TAKE_BATCH = 256;
/** Expired leases one take script puts back at most. */
const RECLAIM_BATCH = 256;

/** @typedef {import("../engine/takers.js").Taker} Taker */

/** Random bytes for the take scripts' tokens, drawn 8 at a time from a pool filled 4 KiB at once. */
const pool = Buffer.alloc(4096);
let drawn = pool.length;

/** A take script's random part of its deliveries' tokens: 16 hex digits, new for each run. */
function randomPart() {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  drawn += 8;
  return pool.toString("hex", drawn - 8, drawn);
}

export class Consumer {
  /** @type {import("./connection.js").Connection} */
  #conn;
  /** @type {import("./options.js").QueueOptions} */
  #options;
  #channel;
  #schedules;
  /** @type {(type: string, detail: () => object) => void} */
  #tell;
  /** Whether the queue is paused, as the last take reply or channel message said. */
  #paused = false;
  #vanished;
  #timer = new Alarm(true, () => this.#fire());
  /** Waiting takes, in call order (shared by the shards of a queue: js/redis/shards.js). */
  #takers;
  /** @type {import("./pool.js").Pool | undefined} the shards' shared takes, or none */
  #pool;
  /** @type {Promise<void> | null} subscribing and the first wake; null until a take waits */
  #consuming = null;
  #head = Number.POSITIVE_INFINITY; // earliest pending deadline known (server ms)
  #heard = Number.POSITIVE_INFINITY; // earliest head heard since the running take script was called
  #leaseHead = Number.POSITIVE_INFINITY; // earliest lease expiry known (server ms)
  /** @type {Promise<void> | null} the running wake */
  #waking = null;
  #again = false;
  #lastCheck = Number.NEGATIVE_INFINITY;
  /** When the next safety check is due (local ms): see #checked(). */
  #nextCheck = Number.NEGATIVE_INFINITY;
  #retryAt = 0;
  /** When a start that failed is tried again (local ms), or Infinity. */
  #restartAt = Number.POSITIVE_INFINITY;
  #failures = 0;
  /** @type {Set<RedisJob>} jobs whose process() handler runs: their leases are extended */
  #extending = new Set();
  #extendAt = Number.POSITIVE_INFINITY;
  /** @type {Set<Worker>} the workers whose slots still run (closing ones too) */
  #workers = new Set();
  #closing = false;
  #closed = false;
  /** What hears the head channel: messages, and the subscriber's reconnections (when messages may have been missed). */
  #listener = { onMessage: (/** @type {string} */ m) => this.#message(m), onReady: () => this.#wake() };
  #counters = { wakes: 0, earlyWakes: 0, messages: 0, delivered: 0, retried: 0, redelivered: 0, released: 0 };
  #lateness;
  /** The acks made in one turn, gathered: one script per 500. @type {import("../engine/batch.js").Batcher<[string, string], boolean>} */
  #acks;

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
    this.#schedules = schedules;
    this.#vanished = vanished;
    this.#acks = conn.batcher(SCRIPTS.ack, ACK_BATCH, (deliveries) => conn.run(SCRIPTS.ack, { deliveries }), true);
    conn.onReady(() => this.#consuming && this.#wake());
  }

  /** What a RedisJob asks of its queue. @type {import("../engine/job.js").JobOps} */
  #jobOps = {
    ack: async (job, token) => {
      const held = (await this.#acks.add([[job.id, token]]))[0];
      if (held) this.#tell("acked", () => ({ id: job.id }));
      return held;
    },
    nack: async (job, token, delayMs, reason, stack) => {
      const at = moment();
      const { clockTolerance: tolerance, maxAttempts } = this.#options;
      const params = () => ({
        channel: this.#channel,
        stamp: this.#conn.clock.stamp(at),
        tolerance,
        id: job.id,
        token,
        delayMs,
        maxAttempts,
        reason,
        stack: stack ?? "",
      });
      const { held, dead, head, vanished } = await this.#conn.run(SCRIPTS.nack, params);
      if (vanished) this.#vanished();
      this.sawHead(head);
      if (dead) this.#tell("dead", () => ({ id: job.id, reason }));
      else if (held) this.#tell("nacked", () => ({ id: job.id, attempt: job.attempt, delayMs, reason }));
      return held;
    },
    extend: async (job, token, ms) => {
      /** @type {[string, string][]} */
      const deliveries = [[job.id, token]];
      const params = { ms: ms ?? this.#options.visibilityTimeout, longer: false, deliveries };
      const { leaseHead, held } = await this.#conn.run(SCRIPTS.extend, params);
      this.#sawLeases(leaseHead);
      return held[0];
    },
  };

  /** This process's figures, for stats(). */
  figures() {
    return {
      takers: this.#takers.size,
      timersArmed: this.#timer.armed ? 1 : 0,
      timerArms: this.#timer.arms,
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
      else this.#demand();
    });
  }

  // --- the hooks of a shard (js/redis/shards.js) -----------------------------------------

  /** The earliest pending deadline known (server ms), Infinity while paused or unknown. */
  get head() {
    return this.#paused ? Number.POSITIVE_INFINITY : this.#head;
  }

  /** The leases of running handlers (a sharded queue's workers hold each job's on its own shard). */
  get leases() {
    return this.#leases;
  }

  /** Whether its known head is due and it may take (by the server's clock as this process knows it). */
  get due() {
    return this.#consuming !== null && !this.#paused && this.#head <= this.#conn.clock.serverNow();
  }

  /**
   * Takes wait in the shared line: start consuming, take what is due, or arm for the head.
   * Returns whether a take script will run for them (now, or next in the running wake).
   */
  demand() {
    if (this.#takers.size === 0 || this.#closing) return false;
    return this.#demand();
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

  /** The leases of running handlers, extended every visibilityTimeout / 3 while they run. */
  #leases = {
    /** @param {RedisJob} job */
    hold: (job) => {
      this.#extending.add(job);
      if (this.#extendAt === Number.POSITIVE_INFINITY) {
        this.#extendAt = localNow() + this.#options.visibilityTimeout / 3;
        this.#arm();
      }
    },
    /** @param {RedisJob} job */
    drop: (job) => {
      this.#extending.delete(job);
    },
  };

  /**
   * Stops: waiting takes reject with ClosedError, process() workers finish their running
   * handlers (and ack them; their leases are still extended meanwhile), including workers
   * whose close() was called already; a take script on its way finishes (what it leased goes
   * back). The connection stays open for them; closed() ends the rest.
   */
  async close() {
    this.#closing = true;
    for (const t of this.#takers.clear()) this.#settle(t, () => t.reject(new ClosedError("RedisDelayQueue")));
    this.#arm(); // now only for lease extension
    await Promise.all([...this.#workers].map((w) => w.close()));
    await this.#consuming?.catch(() => {});
    await this.#waking;
  }

  /** The connection is closed: the timer stops for good. */
  closed() {
    this.#closed = true;
    this.#timer.disarm();
  }

  /**
   * A script reply told the head's deadline: keep the earlier of it and what we knew.
   * @param {number} head server ms, Infinity for none
   */
  sawHead(head) {
    if (this.#consuming) this.#heardHead(head);
  }

  /**
   * A head heard from a message or a script reply: the earlier of it and what is known. A
   * take reply on its way does not undo it.
   * @param {number} head server ms
   */
  #heardHead(head) {
    if (head < this.#heard) this.#heard = head;
    if (!(head < this.#head)) return;
    this.#head = head;
    if (this.#takers.size > 0) this.#demand();
  }

  // --- the one timer --------------------------------------------------------------------

  /** A take() is waiting: start consuming, or hand it what is due, or arm for the head. */
  #demand() {
    if (!this.#consuming) {
      this.#restartAt = Number.POSITIVE_INFINITY;
      this.#consuming = this.#startConsuming();
      this.#consuming.catch((e) => this.#failed(e));
      return false;
    }
    if (this.#lastCheck === Number.NEGATIVE_INFINITY) return false; // the first wake is on its way
    if (!this.#paused && this.#free() > 0 && this.#head <= this.#conn.clock.serverNow()) {
      this.#wake();
      return !this.#closing;
    }
    this.#arm();
    return false;
  }

  async #startConsuming() {
    // After a reconnection, messages may have been missed: the listener looks at Redis again.
    await this.#conn.subscribe(this.#channel, this.#listener);
    this.#wake();
  }

  /** @param {string} message a new head's deadline, or "paused" or "resumed" */
  #message(message) {
    if (message === "paused" || message === "resumed") {
      this.#counters.messages++;
      this.#pausedNow(message === "paused");
      return;
    }
    const head = Number(message);
    if (Number.isNaN(head)) return; // a connection's probe (js/redis/connection.js)
    this.#counters.messages++;
    this.#heardHead(head);
  }

  /** Sets the one timer for the earliest thing this process must act on. */
  #arm() {
    if (this.#closed) return;
    if (!this.#consuming) {
      this.#timer.set(this.#restartAt);
      return;
    }
    let at = Math.min(this.#takers.earliestTimeout(), this.#extendAt);
    // Closing: only the leases of the handlers it waits for are still kept.
    if (!this.#waking && !this.#closing) {
      // What needs Redis waits out a back-off after a failure; a running wake re-arms when done.
      const clock = this.#conn.clock;
      let redis = Math.min(this.#nextCheck, clock.localAt(this.#leaseHead));
      if (this.#free() > 0 && !this.#paused) redis = Math.min(redis, clock.localAt(this.#head));
      at = Math.min(at, Math.max(redis, this.#retryAt));
    }
    this.#timer.set(at);
  }

  #fire() {
    if (this.#closed) return;
    if (!this.#consuming) {
      // A start that failed, tried again after its back-off.
      this.#restartAt = Number.POSITIVE_INFINITY;
      if (this.#takers.size > 0) this.#demand();
      return;
    }
    const now = localNow();
    let acted = false;
    for (const t of this.#takers.expired(now)) {
      acted = true;
      this.#settle(t, () => t.resolve(undefined));
    }
    if (now >= this.#extendAt) {
      acted = true;
      this.#extend();
    }
    if (!this.#waking && !this.#closing && now >= this.#retryAt) {
      const server = this.#conn.clock.serverNow(now);
      const due = this.#free() > 0 && !this.#paused && this.#head <= server;
      if (due || this.#leaseHead <= server || now >= this.#nextCheck) {
        this.#wake();
        return;
      }
    }
    // Node's timers can fire up to ~1 ms before the clock says so: re-arm, hand out nothing.
    if (!acted && !this.#waking) this.#counters.earlyWakes++;
    this.#arm();
  }

  /** Runs the take script (lease expiry, then transfer to the waiting takes) until nothing more is due. */
  #wake() {
    if (this.#closing) return;
    if (this.#waking) {
      this.#again = true;
      return;
    }
    /** @type {() => void} */
    let done = () => {};
    this.#waking = new Promise((resolve) => (done = resolve));
    this.#arm(); // only the take timeouts and lease extension stay armed meanwhile
    this.#wakeUntilDone().then(done);
  }

  /**
   * A take reply came: the next safety check is due within safetyInterval, at a random point
   * of its last quarter, so that the checks of many queues started together (ten thousand in
   * one process) spread out instead of reaching Redis in one burst every safetyInterval.
   */
  #checked() {
    this.#lastCheck = localNow();
    this.#nextCheck = this.#lastCheck + this.#options.safetyInterval * (0.75 + 0.25 * Math.random());
  }

  async #wakeUntilDone() {
    try {
      do {
        this.#again = false;
        this.#counters.wakes++;
        const { visibilityTimeout: visibility, maxAttempts } = this.#options;
        const wanted = Math.min(this.#takers.size, TAKE_BATCH);
        const count = this.#pool ? this.#pool.reserve(wanted, this) : wanted;
        const token = randomPart();
        const params = { channel: this.#channel, count, visibility, maxAttempts, reclaim: RECLAIM_BATCH, token };
        this.#heard = Number.POSITIVE_INFINITY;
        let reply;
        try {
          reply = await this.#conn.run(SCRIPTS.take, params);
        } catch (e) {
          this.#pool?.unreserve(count, this);
          throw e;
        }
        const { now, head, leaseHead, paused, reclaimed, needs, skipped, vanished, items } = reply;
        if (vanished) this.#vanished();
        this.#failures = 0;
        this.#retryAt = 0;
        this.#checked();
        this.#head = Math.min(head, this.#heard);
        this.#leaseHead = leaseHead;
        if (paused !== this.#paused) this.#pausedNow(paused);
        for (const { id, attempt, dead, reason } of reclaimed) {
          if (dead) this.#tell("dead", () => ({ id, reason }));
          else {
            this.#counters.redelivered++;
            this.#tell("redelivered", () => ({ id, attempt }));
          }
        }
        const back = this.#deliver(items, now);
        this.#pool?.unreserve(count, this); // the takes it did not serve: another shard may take for them
        for (const { schedule, due } of skipped) this.#tell("skipped", () => ({ schedule, due, reason: "overlap" }));
        // Cron schedules whose next occurrence the script could not compute: this process does.
        if (needs.length > 0) this.#head = Math.min(this.#head, await this.#schedules.advance(needs));
        if (back.length) await Promise.all(back);
        // The handlers that finish in this turn take again (and ack) before the next take
        // script: it takes for all of them at once.
        if (items.length) await new Promise((resolve) => setImmediate(resolve));
        // A shard's consumer goes again when its pool hands it the takes (js/redis/shards.js).
        if (!this.#pool && this.#takers.size > 0 && !this.#paused && this.#head <= now) this.#again = true;
      } while (this.#again && !this.#closing);
    } catch (e) {
      if (!this.#closing) {
        this.#failed(e);
      }
    }
    this.#waking = null;
    this.#arm();
  }

  /**
   * A wake or the start failed. Redis unreachable: try again after a back-off, up to the safety
   * interval (onerror hears of it once per outage). An error that will not go away by itself
   * (a permission the Redis user lacks, a database Redis refused): the waiting takes reject
   * with it, and the next take starts again.
   * @param {unknown} e
   */
  #failed(e) {
    this.#pool?.answered(this);
    this.#failures++;
    this.#retryAt = localNow() + Math.min(this.#options.safetyInterval, 50 * 2 ** Math.min(this.#failures, 10));
    if (this.#closing) return;
    this.#tell("error", () => ({ error: e }));
    if (isLasting(e)) {
      this.#conn.report(e);
      for (const t of this.#takers.clear()) this.#settle(t, () => t.reject(e));
      if (this.#lastCheck === Number.NEGATIVE_INFINITY) this.#consuming = null;
      this.#arm();
      return;
    }
    this.#conn.report(e);
    if (this.#lastCheck === Number.NEGATIVE_INFINITY) {
      // Could not even start: start again after the back-off.
      this.#consuming = null;
      this.#restartAt = this.#retryAt;
      this.#arm();
    }
  }

  /**
   * Hands the items of a take reply to the waiting takes, in order, in this turn; an item whose
   * value is not JSON goes to the dead letters, and one for which no take waits any more goes
   * back to its place. Returns those scripts, on their way.
   * @param {{ id: string, text: string, deadline: number, attempt: number, token: string, schedule: string | undefined }[]} items
   * @param {number} now the server's time of the take script
   * @returns {Promise<void>[]}
   */
  #deliver(items, now) {
    /** @type {Promise<void>[]} */
    const back = [];
    for (const { id, text, deadline, attempt, token, schedule } of items) {
      let value;
      try {
        value = JSON.parse(text);
      } catch {
        // Not the parser's message: it quotes the text, and a reason is shown where values are hidden.
        const reason = "value is not JSON (the dead letter's raw holds its text)";
        back.push(this.#conn.run(SCRIPTS.bury, { id, token, reason }).then(() => void (this.#again = true)));
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

  /**
   * The queue was paused or resumed (a channel message, or a take reply that says so): tell,
   * and on resume look at the queue at once.
   * @param {boolean} paused
   */
  #pausedNow(paused) {
    if (paused === this.#paused) return;
    this.#paused = paused;
    this.#tell(paused ? "paused" : "resumed", () => ({}));
    if (!paused && this.#takers.size > 0) this.#wake();
    else this.#arm();
  }

  #extend() {
    const jobs = [...this.#extending];
    this.#extendAt = jobs.length ? localNow() + this.#options.visibilityTimeout / 3 : Number.POSITIVE_INFINITY;
    if (!jobs.length) return;
    // Only ever longer: a lease its handler extended further (job.extend) stays so.
    const params = { ms: this.#options.visibilityTimeout, longer: true, deliveries: jobs.map(RedisJob.delivery) };
    this.#conn.run(SCRIPTS.extend, params).then(
      ({ leaseHead }) => this.#sawLeases(leaseHead),
      (e) => this.#conn.report(e),
    );
  }

  /** @param {number} leaseHead server ms, Infinity for none */
  #sawLeases(leaseHead) {
    this.#leaseHead = leaseHead;
    this.#arm();
  }

  // --- the waiting takes ----------------------------------------------------------------

  /** @param {Taker} taker @param {() => void} settle */
  #leave(taker, settle) {
    if (taker.done) return;
    this.#takers.remove(taker);
    this.#settle(taker, settle);
    this.#arm();
  }

  /** @param {Taker} taker @param {() => void} settle */
  #settle(taker, settle) {
    taker.done = true;
    if (taker.signal) taker.signal.removeEventListener("abort", /** @type {() => void} */ (taker.onAbort));
    settle();
  }
}
