// The ONE alarm of a RedisDelayQueue's consumer in this process (js/engine/alarms.js: the alarms
// of every queue of the process share one host timer), and the take scripts it runs. It is
// armed for the earliest thing the process must act on:
//
// - the head's deadline, while a take waits (learned from script replies and from the head
//   channel: an offer, reschedule, nack or retry that makes the head earlier publishes it);
// - the earliest lease expiry (an expired lease is put back by the take script);
// - a waiting take's timeout;
// - the lease extension of running process() handlers (js/redis/outcomes.js `Leases`);
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
// A take script takes for every take waiting (up to TAKE_BATCH), and a reply's items are handed
// out in one turn (js/redis/consumer.js `deliver`); the next take script waits for the turn's
// I/O callbacks to run first (setImmediate), so that the process() slots whose handlers
// returned meanwhile are waiting again and their acks gathered: a burst costs one take and one
// ack script per free slots. Arming costs O(takes waiting with a timeout).

import { randomFillSync } from "node:crypto";
import { setImmediate } from "node:timers";
import { Alarm } from "../engine/alarms.js";
import { localNow } from "../engine/clock.js";
import { isLasting } from "./errors.js";
import { SCRIPTS } from "./scripts.js";

/** Items one take script hands out at most. */
const TAKE_BATCH = 256;
/** Expired leases one take script puts back at most. */
const RECLAIM_BATCH = 256;

/** Random bytes for the take scripts' tokens, drawn 8 at a time from a pool filled 4 KiB at once. */
const bytes = Buffer.alloc(4096);
let drawn = bytes.length;

/** A take script's random part of its deliveries' tokens: 16 hex digits, new for each run. */
function randomPart() {
  if (drawn === bytes.length) {
    randomFillSync(bytes);
    drawn = 0;
  }
  drawn += 8;
  return bytes.toString("hex", drawn - 8, drawn);
}

/**
 * What the alarm needs of its consumer (js/redis/consumer.js), which holds the waiting takes.
 * @typedef {object} Consuming
 * @property {import("./consumer.js").Consumer} owner the consumer itself: how its pool names it
 * @property {import("./connection.js").Connection} conn
 * @property {import("./options.js").QueueOptions} options
 * @property {string} channel the head channel
 * @property {(type: string, detail: () => object) => void} tell an event of this process
 * @property {{ advance(needs: import("./schedules.js").Need[]): Promise<number> }} schedules what computes cron schedules' occurrences
 * @property {() => void} vanished a script found the queue's sequence counter gone
 * @property {import("./pool.js").Pool | undefined} pool the takes shared with the other shards, or none
 * @property {import("../engine/takers.js").Takers} takers the waiting takes
 * @property {() => number} free the waiting takes no other shard's take script reserved
 * @property {import("./outcomes.js").Leases} leases
 * @property {(items: any[], now: number, again: () => void) => Promise<void>[]} deliver hands a reply's items out
 * @property {(taker: import("../engine/takers.js").Taker, settle: () => void) => void} settle
 * @property {() => boolean} closing whether close() was called
 * @property {{ wakes: number, earlyWakes: number, messages: number, redelivered: number }} counters
 */

export class Waker {
  /** @type {Consuming} */
  #c;
  #timer = new Alarm(true, () => this.#fire());
  /** Whether the queue is paused, as the last take reply or channel message said. */
  #paused = false;
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
  #closed = false;
  /** What hears the head channel: messages, and the subscriber's reconnections (when messages may have been missed). */
  #listener = { onMessage: (/** @type {string} */ m) => this.#message(m), onReady: () => this.#wake() };

  /** @param {Consuming} consuming */
  constructor(consuming) {
    this.#c = consuming;
    consuming.conn.onReady(() => this.#consuming && this.#wake());
  }

  /** The alarm, for the figures: whether it is armed, and how often it was. */
  get timer() {
    return this.#timer;
  }

  /** The earliest pending deadline known (server ms), Infinity while paused or unknown. */
  get head() {
    return this.#paused ? Number.POSITIVE_INFINITY : this.#head;
  }

  /** Whether its known head is due and it may take (by the server's clock as this process knows it). */
  get due() {
    return this.#consuming !== null && !this.#paused && this.#head <= this.#c.conn.clock.serverNow();
  }

  /** What close() waits for: the start, and the running wake. */
  async settled() {
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

  /** @param {number} leaseHead server ms, Infinity for none */
  sawLeases(leaseHead) {
    this.#leaseHead = leaseHead;
    this.arm();
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
    if (this.#c.takers.size > 0) this.demand();
  }

  /**
   * A take() is waiting: start consuming, or hand it what is due, or arm for the head. Returns
   * whether a take script will run for it (now, or next in the running wake).
   */
  demand() {
    if (!this.#consuming) {
      this.#restartAt = Number.POSITIVE_INFINITY;
      this.#consuming = this.#startConsuming();
      this.#consuming.catch((e) => this.#failed(e));
      return false;
    }
    if (this.#lastCheck === Number.NEGATIVE_INFINITY) return false; // the first wake is on its way
    if (!this.#paused && this.#c.free() > 0 && this.#head <= this.#c.conn.clock.serverNow()) {
      this.#wake();
      return !this.#c.closing();
    }
    this.arm();
    return false;
  }

  async #startConsuming() {
    // After a reconnection, messages may have been missed: the listener looks at Redis again.
    await this.#c.conn.subscribe(this.#c.channel, this.#listener);
    this.#wake();
  }

  /** @param {string} message a new head's deadline, or "paused" or "resumed" */
  #message(message) {
    if (message === "paused" || message === "resumed") {
      this.#c.counters.messages++;
      this.#pausedNow(message === "paused");
      return;
    }
    const head = Number(message);
    if (Number.isNaN(head)) return; // a connection's probe (js/redis/probe.js)
    this.#c.counters.messages++;
    this.#heardHead(head);
  }

  /** Sets the one timer for the earliest thing this process must act on. */
  arm() {
    if (this.#closed) return;
    if (!this.#consuming) {
      this.#timer.set(this.#restartAt);
      return;
    }
    const c = this.#c;
    let at = Math.min(c.takers.earliestTimeout(), c.leases.at);
    // Closing: only the leases of the handlers it waits for are still kept.
    if (!this.#waking && !c.closing()) {
      // What needs Redis waits out a back-off after a failure; a running wake re-arms when done.
      const clock = c.conn.clock;
      let redis = Math.min(this.#nextCheck, clock.localAt(this.#leaseHead));
      if (c.free() > 0 && !this.#paused) redis = Math.min(redis, clock.localAt(this.#head));
      at = Math.min(at, Math.max(redis, this.#retryAt));
    }
    this.#timer.set(at);
  }

  #fire() {
    if (this.#closed) return;
    const c = this.#c;
    if (!this.#consuming) {
      // A start that failed, tried again after its back-off.
      this.#restartAt = Number.POSITIVE_INFINITY;
      if (c.takers.size > 0) this.demand();
      return;
    }
    const now = localNow();
    let acted = false;
    for (const t of c.takers.expired(now)) {
      acted = true;
      c.settle(t, () => t.resolve(undefined));
    }
    if (c.leases.extendIfDue(now)) acted = true;
    if (!this.#waking && !c.closing() && now >= this.#retryAt) {
      const server = c.conn.clock.serverNow(now);
      const due = c.free() > 0 && !this.#paused && this.#head <= server;
      if (due || this.#leaseHead <= server || now >= this.#nextCheck) {
        this.#wake();
        return;
      }
    }
    // Node's timers can fire up to ~1 ms before the clock says so: re-arm, hand out nothing.
    if (!acted && !this.#waking) c.counters.earlyWakes++;
    this.arm();
  }

  /** Runs the take script (lease expiry, then transfer to the waiting takes) until nothing more is due. */
  #wake() {
    if (this.#c.closing()) return;
    if (this.#waking) {
      this.#again = true;
      return;
    }
    /** @type {() => void} */
    let done = () => {};
    this.#waking = new Promise((resolve) => (done = resolve));
    this.arm(); // only the take timeouts and lease extension stay armed meanwhile
    this.#wakeUntilDone().then(done);
  }

  /**
   * A take reply came: the next safety check is due within safetyInterval, at a random point
   * of its last quarter, so that the checks of many queues started together (ten thousand in
   * one process) spread out instead of reaching Redis in one burst every safetyInterval.
   */
  #checked() {
    this.#lastCheck = localNow();
    this.#nextCheck = this.#lastCheck + this.#c.options.safetyInterval * (0.75 + 0.25 * Math.random());
  }

  async #wakeUntilDone() {
    const c = this.#c;
    const { pool, owner } = c;
    try {
      do {
        this.#again = false;
        c.counters.wakes++;
        const { visibilityTimeout: visibility, maxAttempts } = c.options;
        const wanted = Math.min(c.takers.size, TAKE_BATCH);
        const count = pool ? pool.reserve(wanted, owner) : wanted;
        const token = randomPart();
        const params = { channel: c.channel, count, visibility, maxAttempts, reclaim: RECLAIM_BATCH, token };
        this.#heard = Number.POSITIVE_INFINITY;
        let reply;
        try {
          reply = await c.conn.run(SCRIPTS.take, params);
        } catch (e) {
          pool?.unreserve(count, owner);
          throw e;
        }
        const { now, head, leaseHead, paused, reclaimed, needs, skipped, vanished, items } = reply;
        if (vanished) c.vanished();
        this.#failures = 0;
        this.#retryAt = 0;
        this.#checked();
        this.#head = Math.min(head, this.#heard);
        this.#leaseHead = leaseHead;
        if (paused !== this.#paused) this.#pausedNow(paused);
        for (const { id, attempt, dead, reason } of reclaimed) {
          if (dead) c.tell("dead", () => ({ id, reason }));
          else {
            c.counters.redelivered++;
            c.tell("redelivered", () => ({ id, attempt }));
          }
        }
        const back = c.deliver(items, now, () => void (this.#again = true));
        pool?.unreserve(count, owner); // the takes it did not serve: another shard may take for them
        for (const { schedule, due } of skipped) c.tell("skipped", () => ({ schedule, due, reason: "overlap" }));
        // Cron schedules whose next occurrence the script could not compute: this process does.
        if (needs.length > 0) this.#head = Math.min(this.#head, await c.schedules.advance(needs));
        if (back.length) await Promise.all(back);
        // The handlers that finish in this turn take again (and ack) before the next take
        // script: it takes for all of them at once.
        if (items.length) await new Promise((resolve) => setImmediate(resolve));
        // A shard's consumer goes again when its pool hands it the takes (js/redis/shards.js).
        if (!pool && c.takers.size > 0 && !this.#paused && this.#head <= now) this.#again = true;
      } while (this.#again && !c.closing());
    } catch (e) {
      if (!c.closing()) {
        this.#failed(e);
      }
    }
    this.#waking = null;
    this.arm();
  }

  /**
   * A wake or the start failed. Redis unreachable: try again after a back-off, up to the safety
   * interval (onerror hears of it once per outage). An error that will not go away by itself
   * (a permission the Redis user lacks, a database Redis refused): the waiting takes reject
   * with it, and the next take starts again.
   * @param {unknown} e
   */
  #failed(e) {
    const c = this.#c;
    c.pool?.answered(c.owner);
    this.#failures++;
    this.#retryAt = localNow() + Math.min(c.options.safetyInterval, 50 * 2 ** Math.min(this.#failures, 10));
    if (c.closing()) return;
    c.tell("error", () => ({ error: e }));
    if (isLasting(e)) {
      c.conn.report(e);
      for (const t of c.takers.clear()) c.settle(t, () => t.reject(e));
      if (this.#lastCheck === Number.NEGATIVE_INFINITY) this.#consuming = null;
      this.arm();
      return;
    }
    c.conn.report(e);
    if (this.#lastCheck === Number.NEGATIVE_INFINITY) {
      // Could not even start: start again after the back-off.
      this.#consuming = null;
      this.#restartAt = this.#retryAt;
      this.arm();
    }
  }

  /**
   * The queue was paused or resumed (a channel message, or a take reply that says so): tell,
   * and on resume look at the queue at once.
   * @param {boolean} paused
   */
  #pausedNow(paused) {
    if (paused === this.#paused) return;
    this.#paused = paused;
    this.#c.tell(paused ? "paused" : "resumed", () => ({}));
    if (!paused && this.#c.takers.size > 0) this.#wake();
    else this.arm();
  }
}
