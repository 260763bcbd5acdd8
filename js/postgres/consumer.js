// The consuming side of one queue in a process, and its ONE alarm (an alarm of the process's
// one host timer, ../engine/alarms.js): armed, while takes wait, for the earliest of the head's
// deadline, a lease expiry, a take's timeout and the safety check; re-armed when a
// notification names an earlier head. No poll: the safety check (every `safetyInterval`,
// long) only covers a notification that never came.
//
// A wake runs the take statement once for all the takes waiting (process() slots included),
// up to their number: lease expiries, then the due items, leased to this process in one
// statement (SKIP LOCKED: consumers never wait for one another), carrying the acks gathered
// before it (./outcomes.js carry()). Items the take statement
// handed out after their take left (aborted, timed out) are released in one statement.
// Deadlines are the server's epoch ms; the alarm is set in local ms through the offset learned
// from each reply's server time, erring late, and a wake that finds nothing due re-arms.

import { abortReason } from "../engine/arguments.js";
import { ClosedError } from "../engine/errors.js";
import { Lateness } from "../engine/lateness.js";
import { Alarm } from "../engine/alarms.js";
import { localNow } from "../engine/clock.js";
import { Job } from "../engine/job.js";
import { Takers } from "../engine/takers.js";
import { dueOf } from "../schedule/spec.js";
import { idBytes } from "./statements.js";

/** Occurrence ids begin with this byte, which no UTF-8 text (so no caller's id) holds. */
export const OCCURRENCE = 0xff;

export class Consumer {
  #q;
  #takers = new Takers();
  #alarm = new Alarm(true, () => this.wake());
  #extender = new Alarm(false, () => this.#extendHeld());
  /** Server ms minus local ms, as the latest reply showed it (a lower bound: erring late). */
  #offset = Number.NaN;
  #running = false;
  #again = false;
  #head = Number.POSITIVE_INFINITY;
  #expiry = Number.POSITIVE_INFINITY;
  #paused = false;
  #listening = false;
  /** After a failed take: no other before this (local ms), and the wait that doubles up to 2 s. */
  #retryAt = 0;
  #backoff = 0;
  #closed = false;
  /** This process's acks and nacks on their way: a take waits for them, so that it sees their outcomes (a run's ack before the next occurrence's overlap check, a nack before the next take). @type {Set<Promise<unknown>>} */
  settling = new Set();
  /** Running handlers' jobs, their leases extended while they run. @type {Set<Job>} */
  #held = new Set();
  figures = { wakes: 0, earlyWakes: 0, messages: 0, delivered: 0, retried: 0, redelivered: 0, released: 0 };
  lateness = new Lateness();
  #ear = {
    heard: (/** @type {string} */ kind, /** @type {number} */ deadline) => {
      this.figures.messages++;
      if (kind === "h") this.sawHead(deadline);
      else {
        this.#paused = kind === "p";
        this.#q.tell(this.#paused ? "paused" : "resumed", () => ({}));
        if (!this.#paused) this.wake();
      }
    },
    lost: () => this.wake(),
  };

  /**
   * @param {{ conn: import("./connection.js").Connection, st: import("./statements.js").Statements,
   *   name: string, o: import("./options.js").QueueOptions, tell: (type: string, detail: () => object) => void,
   *   listener: () => Promise<import("./listener.js").Listener>, ops: import("../engine/job.js").JobOps,
   *   value: (text: string) => unknown, carry: () => ReturnType<import("./outcomes.js").Outcomes["carry"]>, schedules: import("./schedules.js").PostgresSchedules }} q
   */
  constructor(q) {
    this.#q = q;
  }

  get takers() {
    return this.#takers.size;
  }

  get armed() {
    return this.#alarm.armed ? 1 : 0;
  }

  get arms() {
    return this.#alarm.arms;
  }

  /** Local ms for a server deadline, erring late. @param {number} at */
  #local(at) {
    return Number.isNaN(this.#offset) ? localNow() : at - this.#offset;
  }

  /** @param {number} serverAt @param {number} localAt */
  #learn(serverAt, localAt) {
    this.#offset = serverAt - localAt;
  }

  /**
   * Waits for the next due item, leased to this process.
   * @param {AbortSignal | undefined} signal
   * @param {number} timeout ms, or Infinity
   * @returns {Promise<Job | undefined>}
   */
  take(signal, timeout) {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      /** @type {import("../engine/takers.js").Taker} */
      const taker = {
        resolve,
        reject,
        until: timeout === Number.POSITIVE_INFINITY ? timeout : localNow() + timeout,
        signal,
        onAbort: null,
        done: false,
      };
      if (signal) {
        taker.onAbort = () => {
          if (taker.done) return;
          taker.done = true;
          this.#takers.remove(taker);
          reject(abortReason(signal));
        };
        signal.addEventListener("abort", taker.onAbort, { once: true });
      }
      this.#takers.push(taker);
      this.#listen().then(
        () => this.wake(),
        (e) => this.#q.tell("error", () => ({ error: e })),
      );
    });
  }

  async #listen() {
    if (this.#listening) return;
    this.#listening = true;
    await (await this.#q.listener()).add(this.#q.st.channel, this.#q.name, this.#ear);
  }

  /** A head at server ms `deadline` was seen (a notification, an offer's reply). @param {number} deadline */
  sawHead(deadline) {
    if (!(deadline < this.#head)) return;
    this.#head = deadline;
    this.#arm();
  }

  /** Runs the take statement for the waiting takes, again while it finds more to do. */
  async wake() {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    try {
      do {
        this.#again = false;
        for (const t of this.#takers.expired(localNow())) {
          t.done = true;
          t.resolve(undefined);
        }
        if (this.#takers.size === 0) break;
        await this.#takeRun();
        this.#backoff = 0;
      } while (this.#again && !this.#closed);
    } catch (e) {
      this.#q.tell("error", () => ({ error: e }));
      // Postgres unreachable: try again later, not in a loop.
      this.#backoff = Math.min(2000, Math.max(50, this.#backoff * 2));
      this.#retryAt = localNow() + this.#backoff;
    } finally {
      this.#running = false;
      this.#arm();
    }
  }

  async #takeRun() {
    const q = this.#q;
    if (this.settling.size > 0) await Promise.allSettled(this.settling);
    const n = this.#takers.size;
    if (n === 0) return;
    this.figures.wakes++;
    // The acks gathered before this take go in its statement, first: it sees their outcomes.
    const acks = q.carry();
    const values = [q.name, n, q.o.visibilityTimeout, q.o.maxAttempts, acks?.ids ?? [], acks?.tokens ?? []];
    /** @type {any[]} */
    let rows;
    try {
      rows = await q.conn.query("take()", q.st.take, values);
    } catch (e) {
      acks?.fail(e);
      throw e;
    }
    acks?.settle(rows);
    const localAt = localNow();
    const next = rows[rows.length - 1];
    this.#learn(next.at, localAt);
    this.#paused = next.value === "paused";
    this.#head = next.deadline ?? Number.POSITIVE_INFINITY;
    this.#expiry = next.expiry ?? Number.POSITIVE_INFINITY;
    const taken = [];
    for (const r of rows) {
      if (r.kind === "a") continue;
      if (r.kind === "t") taken.push(r);
      else if (r.kind === "c") this.#answer(r);
      else if (r.kind === "r" || r.kind === "d") {
        const id = idOf(r.id);
        if (r.kind === "d") q.tell("dead", () => ({ id, reason: JSON.parse(r.reason) }));
        else {
          this.figures.redelivered++;
          q.tell("redelivered", () => ({ id, attempt: r.attempt }));
        }
      }
    }
    if (taken.length === 0 && rows.length === 1 && !this.#paused && this.#head > next.at) this.figures.earlyWakes++;
    // RETURNING keeps no order: deadline order, FIFO among ties (seq), as the statement chose them.
    taken.sort((a, b) => a.deadline - b.deadline || (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
    const unclaimed = [];
    for (const r of taken) {
      const taker = this.#takers.shift();
      if (taker === undefined) {
        unclaimed.push(r);
        continue;
      }
      taker.done = true;
      if (taker.signal && taker.onAbort) taker.signal.removeEventListener("abort", taker.onAbort);
      const id = idOf(r.id);
      const schedule = r.schedule === null ? undefined : r.schedule.toString("utf8");
      // An occurrence's deadline is its due time, on a retry too (its id says it).
      const deadline = schedule === undefined ? r.deadline : dueOf(id);
      const job = new Job(q.ops, id, q.value(r.value), deadline, r.attempt, `${r.token}`, schedule);
      const lateness = Math.max(0, r.at - r.deadline);
      this.lateness.record(lateness);
      this.figures.delivered++;
      if (r.attempt > 1) this.figures.retried++;
      q.tell("delivered", () => ({ id, attempt: r.attempt, deadline: r.deadline, lateness }));
      taker.resolve(job);
    }
    if (unclaimed.length > 0) {
      const ids = unclaimed.map((r) => r.id);
      const tokens = unclaimed.map((r) => r.token);
      const [{ released }] = await q.conn.query("take()", q.st.release, [q.name, ids, tokens]);
      this.figures.released += released;
      this.#again = true;
    }
    // A full batch: more may be due now.
    if (taken.length === n && this.#takers.size > 0) this.#again = true;
  }

  /** A take asked for a cron schedule's successor: computed here, placed by a compare-and-set. @param {any} r */
  #answer(r) {
    this.#q.schedules.answer(r).then(
      (keep) => {
        if (keep !== undefined) this.sawHead(keep);
      },
      (e) => this.#q.tell("error", () => ({ error: e })),
    );
  }

  #arm() {
    if (this.#closed) return;
    if (this.#takers.size === 0) {
      this.#alarm.disarm();
      return;
    }
    let at = localNow() + this.#q.o.safetyInterval * (0.75 + Math.random() / 4);
    if (!this.#paused) at = Math.min(at, this.#local(this.#head));
    at = Math.max(Math.min(at, this.#local(this.#expiry)), this.#retryAt);
    at = Math.min(at, this.#takers.earliestTimeout());
    if (at <= localNow()) {
      this.#alarm.disarm();
      queueMicrotask(() => this.wake());
      return;
    }
    this.#alarm.set(at);
  }

  /** The leases of running handlers (process()): extended while they run. */
  leases = {
    hold: (/** @type {Job} */ job) => {
      this.#held.add(job);
      this.#armExtender();
    },
    drop: (/** @type {Job} */ job) => {
      this.#held.delete(job);
    },
  };

  #armExtender() {
    if (this.#held.size === 0) this.#extender.disarm();
    else if (!this.#extender.armed) this.#extender.set(localNow() + this.#q.o.visibilityTimeout / 3);
  }

  async #extendHeld() {
    await Promise.all(
      [...this.#held].map((job) => job.extend().catch((e) => this.#q.tell("error", () => ({ error: e })))),
    );
    this.#armExtender();
  }

  /** Waiting takes reject with ClosedError; the alarms stop. */
  async close() {
    this.#closed = true;
    this.#alarm.disarm();
    this.#extender.disarm();
    for (const t of this.#takers.clear()) {
      t.done = true;
      t.reject(new ClosedError("take(): the queue was closed"));
    }
    if (this.#listening) (await this.#q.listener()).remove(this.#q.st.channel, this.#q.name, this.#ear);
  }
}

/** An id from its bytes: an occurrence's (OCCURRENCE first) is its schedule's id. @param {Buffer} bytes */
export function idOf(bytes) {
  return (bytes[0] === OCCURRENCE ? bytes.subarray(1) : bytes).toString("utf8");
}

export { idBytes };
