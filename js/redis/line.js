// The line of one Redis queue's calls (js/redis/connection.js): every call in its place, sent in
// order once the connection may send, bounded in time, with flow control, and sent again in
// order when a Cluster slot migration refused it. The connection decides when the line may
// send (a client ready, the probe passed, no script library reloading: `resume`); the line
// decides what goes, in which order, and when a call has waited too long.
//
// Ground rules:
//
// - Order. Calls reach Redis in the order they were made: each takes its place when it is made,
//   and the line is sent in order (a call's arguments are built when it is sent).
// - Cluster slot migrations are retried, in order. While the slot of the queue's keys moves
//   between the masters of a Redis Cluster, a script can be refused with TRYAGAIN (its keys
//   are split between the two nodes), ASK or MOVED (ioredis' Cluster follows these itself, a
//   bounded number of times, then hands the refusal on). A refused call did not run (Redis
//   runs a script all or nothing, and refuses it before it starts), so it is sent again, with
//   a back-off from RETRY_FIRST_MS doubling to RETRY_MAX_MS, until it is answered or its
//   commandTimeout is up. From the first refusal until every refused call has been answered,
//   no call is sent anew: the calls made meanwhile wait in line behind the refused ones; the
//   refused ones go again in call order, together, once no other call is on its way. Calls
//   already sent when the first refusal comes back are in ioredis' hands until they are
//   answered or refused in turn: one that ioredis still retries can run before a call made
//   earlier that it handed back (its retries are bounded per call). With a client that is no
//   Cluster, such a refusal means the server is a cluster node: the call rejects saying so.
// - Bounded, with flow control. At most WINDOW calls are on their way at once; the others wait
//   in line. A call still waiting for a connection `commandTimeout` ms after it was made
//   rejects, never sent, with the last connection error as its cause; a call that waited for
//   the window gets its `commandTimeout` from when it is sent, so the limit measures Redis not
//   answering, not this connection's own line; a call sent and not answered rejects saying it
//   may or may not have been applied, and the calls still waiting for the window behind it
//   reject at once, never sent; a call still refused because its slot was migrating rejects
//   saying so. WAIT (waitForReplicas) has its own timeout on top. One alarm
//   (js/engine/alarms.js, on the process's one host timer, not holding the process open) is
//   armed for the oldest call's limit while calls are on their way, none otherwise; one more
//   while refused calls wait to be sent again.
//
// Costs: a call O(1) (amortized: settled calls leave the head of the array in chunks).

import { Alarm } from "../engine/alarms.js";
import { localNow } from "../engine/clock.js";
import {
  connectionLost,
  isClusterRefusal,
  isMigrating,
  migrating,
  noConnection,
  notACluster,
  noReply,
  notSent,
} from "./errors.js";

/**
 * A call in the line.
 * @typedef {object} Call
 * @property {() => Promise<unknown>} send
 * @property {(value: any) => void} resolve
 * @property {(error: unknown) => void} reject
 * @property {number} deadline local ms by which it settles
 * @property {number} limit ms it has to settle once sent (commandTimeout, and what WAIT blocks)
 * @property {number} seq its place among the calls of this connection
 * @property {boolean} sent
 * @property {boolean} inflight sent and not answered yet
 * @property {unknown} refused the last refusal of a slot migration (TRYAGAIN, ASK, MOVED), if any
 * @property {boolean} done
 */

/**
 * What the line asks of its connection.
 * @typedef {object} Hooks
 * @property {() => void} resume sends what waits, if the connection may (Connection's send)
 * @property {() => boolean} ready whether the client is ready
 * @property {() => boolean} cluster whether the client is a Redis Cluster client
 * @property {() => void} retrying the retry alarm rang: what else waited for it (the probe) goes first
 * @property {() => void} answered a call was answered: connection errors may be said again
 * @property {() => unknown} probeRefused the probe's last refusal by a slot migration, while it waits to run
 * @property {() => unknown} lastError the last connection error
 * @property {(error: unknown) => unknown} redacted the error as a caller may see it
 */

/** The first wait before a call refused by a slot migration is sent again, and the longest. */
export const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 320;

/**
 * Calls on their way at most (flow control): a batch of many scripts (offerMany of 10^5 items
 * is 200) goes a few at a time, each with its own time limit from when it is sent, so that a
 * time limit measures Redis not answering, not the calls in line before it. Eight keep Redis
 * busy: a script takes far longer to run than a reply to arrive.
 */
const WINDOW = 8;

export class Line {
  /** @type {Hooks} */
  #hooks;
  #where;
  #commandTimeout;
  /** The calls on their way, in call order: those sent first, then those waiting to be sent. */
  /** @type {Call[]} */
  #line = [];
  #head = 0; // first call of #line that may still be live
  #unsent = 0; // first call of #line not sent yet
  #timer = new Alarm(false, () => this.#expire());
  #seq = 0;
  /** The calls refused by a slot migration and not settled yet: while there are any, no call is sent anew. */
  /** @type {Set<Call>} */
  #held = new Set();
  /** Those of them waiting to be sent again (when #retry fires), and the wait before the next round. */
  /** @type {Call[]} */
  #again = [];
  #backoff = RETRY_FIRST_MS;
  /** Calls sent and not answered: refused calls go again only once there are none (so in one batch, in order). */
  #inflight = 0;
  /** Whether calls wait to be sent only because WINDOW calls are on their way. */
  #windowed = false;
  #retry = new Alarm(false, () => this.#sendAgain());

  /**
   * @param {Hooks} hooks
   * @param {object} where what errors say of the queue (js/redis/errors.js)
   * @param {number} commandTimeout
   */
  constructor(hooks, where, commandTimeout) {
    this.#hooks = hooks;
    this.#where = where;
    this.#commandTimeout = commandTimeout;
  }

  /** Whether calls wait to be sent. */
  get waiting() {
    return this.#unsent < this.#line.length;
  }

  /** Whether every call in the line has settled. */
  get empty() {
    return this.#line.length === this.#head;
  }

  /**
   * A call in its place in the line; resolves or rejects as it settles.
   * @param {() => Promise<any>} send
   * @param {number} blocks ms it may block on the server beyond commandTimeout (WAIT)
   * @returns {Promise<any>}
   */
  push(send, blocks) {
    return new Promise((resolve, reject) => {
      /** @type {Call} */
      const call = {
        send,
        resolve,
        reject: (e) => reject(this.#hooks.redacted(e)),
        deadline: localNow() + this.#commandTimeout + blocks,
        limit: this.#commandTimeout + blocks,
        seq: this.#seq++,
        sent: false,
        inflight: false,
        refused: null,
        done: false,
      };
      this.#line.push(call);
      if (this.#line.length - this.#head === 1) this.#timer.set(call.deadline);
    });
  }

  /** Sends the waiting calls, in order, as far as the window lets (the connection may send). */
  send() {
    if (this.#held.size > 0) return;
    while (this.#unsent < this.#line.length && this.#inflight < WINDOW) {
      const call = this.#line[this.#unsent++];
      if (call.done) continue;
      // A call that waited for the window (not for a connection) has its time limit from now:
      // the limit measures Redis not answering, not this connection's own line.
      if (this.#windowed) call.deadline = Math.max(call.deadline, localNow() + call.limit);
      this.#dispatch(call);
    }
    this.#windowed = this.#unsent < this.#line.length;
  }

  /** The next round of retries waits longer (up to RETRY_MAX_MS). */
  backOff() {
    this.#backoff = Math.min(this.#backoff * 2, RETRY_MAX_MS);
  }

  /** The probe passed: unless refused calls still wait, retries start again from the first back-off. */
  probed() {
    if (this.#held.size === 0) this.#backoff = RETRY_FIRST_MS;
  }

  /** Something (the probe) waits to go again after the back-off: the retry alarm is armed for it. */
  retryLater() {
    if (!this.#retry.armed) this.#retry.set(localNow() + this.#backoff);
  }

  /**
   * Every call not sent yet rejects with `error`.
   * @param {Error} error
   */
  rejectUnsent(error) {
    this.#reject(this.#unsent, error);
  }

  /** Resolves once every call in the line has settled; the alarms stop then. */
  async drain() {
    await Promise.all(
      this.#line.slice(this.#head).map((c) => c.done || new Promise((r) => this.#settled(c, () => r(undefined)))),
    );
    this.#timer.disarm();
    this.#retry.disarm();
  }

  /**
   * Sends `call` (for the first time, or again after a slot migration refused it).
   * @param {Call} call
   */
  #dispatch(call) {
    call.sent = true;
    call.inflight = true;
    this.#inflight++;
    let sending;
    try {
      sending = call.send();
    } catch (e) {
      sending = Promise.reject(e);
    }
    sending.then(
      (value) => {
        this.#answered(call);
        this.#hooks.answered();
        this.#finish(call, () => call.resolve(value));
      },
      (e) => {
        this.#answered(call);
        if (call.done) return;
        if (!this.#hooks.cluster() && isClusterRefusal(e)) return this.#finish(call, () => call.reject(notACluster(e)));
        if (!isMigrating(e)) return this.#finish(call, () => call.reject(connectionLost(e, this.#where)));
        this.#refuse(call, e);
      },
    );
  }

  /**
   * `call` has its reply; once no call is on its way, the refused ones may go again.
   * @param {Call} call
   */
  #answered(call) {
    call.inflight = false;
    if (--this.#inflight === 0 && this.#again.length > 0 && !this.#retry.armed)
      this.#retry.set(localNow() + this.#backoff);
    if (this.#windowed) queueMicrotask(() => this.#hooks.resume());
  }

  /**
   * A slot migration refused `call`. Redis refuses a script that names a key of a migrating
   * slot before running any of it, and runs a script all or nothing, so the refused call did
   * not take effect and sending it again is safe; it goes again after the back-off, in call
   * order with the other refused calls, and no call is sent anew until they have been answered.
   * @param {Call} call
   * @param {unknown} e
   */
  #refuse(call, e) {
    call.refused = e;
    this.#held.add(call);
    this.#again.push(call);
    if (this.#inflight === 0 && !this.#retry.armed) this.#retry.set(localNow() + this.#backoff);
  }

  /** The retry timer: the refused calls go again, in call order; the next round waits longer. */
  #sendAgain() {
    this.#hooks.retrying();
    if (this.#again.length === 0 || this.#inflight > 0) return; // re-armed when the last call on its way is answered
    if (!this.#hooks.ready()) {
      this.#retry.set(localNow() + this.#backoff); // reconnecting: the next round then
      return;
    }
    const calls = this.#again.filter((c) => !c.done).sort((a, b) => a.seq - b.seq);
    this.#again = [];
    this.backOff();
    for (const call of calls) this.#dispatch(call);
  }

  /**
   * @param {Call} call
   * @param {() => void} settle
   */
  #finish(call, settle) {
    if (this.#settle(call, settle)) this.#advance();
  }

  /**
   * Settles `call` unless it has been (it expired: its caller was told already).
   * @param {Call} call
   * @param {() => void} settle
   */
  #settle(call, settle) {
    if (call.done) return false;
    call.done = true;
    settle();
    if (this.#held.delete(call) && this.#held.size === 0) {
      // The refused calls have all been answered (or timed out): the line moves on.
      this.#backoff = RETRY_FIRST_MS;
      this.#again = [];
      this.#retry.disarm();
      queueMicrotask(() => this.#hooks.resume());
    }
    return true;
  }

  /** Drops the settled calls at the head of the line, and arms the timer for the oldest live one. */
  #advance() {
    const line = this.#line;
    while (this.#head < line.length && line[this.#head].done) this.#head++;
    if (this.#head === line.length) {
      this.#line = [];
      this.#head = 0;
      this.#unsent = 0;
      this.#timer.disarm();
      return;
    }
    if (this.#head > 1024 && this.#head * 2 > line.length) {
      this.#line = line.slice(this.#head);
      this.#unsent -= this.#head;
      this.#head = 0;
    }
    this.#timer.set(this.#line[this.#head].deadline);
  }

  /** The timer: calls past their limit reject, unsent ones never to be sent. */
  #expire() {
    const now = localNow();
    let unanswered = false;
    for (let i = this.#head; i < this.#line.length; i++) {
      const call = this.#line[i];
      if (call.deadline > now) break;
      if (call.done) continue;
      // Waiting for the window: its limit starts when it is sent (or when those before it fail).
      if (!call.sent && this.#windowed && this.#hooks.ready()) continue;
      const ms = this.#commandTimeout;
      if (call.sent && !call.refused) unanswered = true;
      const refused = call.refused ?? (call.sent ? null : this.#hooks.probeRefused());
      const error = refused
        ? migrating(ms, this.#where, refused, call.inflight)
        : call.sent
          ? noReply(ms, this.#where)
          : noConnection(ms, this.#where, this.#hooks.lastError());
      this.#settle(call, () => call.reject(error));
    }
    // Redis did not answer a call on its way: the calls waiting for the window behind it are
    // not sent (so they did not take effect) and reject now, not one window after another.
    if (unanswered && this.#windowed) this.#reject(this.#unsent, notSent(this.#commandTimeout, this.#where));
    else this.#advance();
  }

  /**
   * The calls from `from` on (not sent yet) reject with `error`.
   * @param {number} from
   * @param {Error} error
   */
  #reject(from, error) {
    for (let i = from; i < this.#line.length; i++) {
      const call = this.#line[i];
      this.#settle(call, () => call.reject(error));
    }
    this.#advance();
  }

  /**
   * Resolves `resolve` once `call` has settled.
   * @param {Call} call
   * @param {() => void} resolve
   */
  #settled(call, resolve) {
    const { resolve: res, reject: rej } = call;
    call.resolve = (v) => {
      res(v);
      resolve();
    };
    call.reject = (e) => {
      rej(e);
      resolve();
    };
  }
}
