// Job: one delivery of an item, leased to this process by a durable engine (Redis, Postgres;
// Redis users know it as RedisJob). Its token names the delivery (no two deliveries share one,
// even after the server lost its data): ack(), nack() and extend() change
// the item only while this delivery holds the lease, so a delivery whose lease ran out (and
// whose item went to another consumer) changes nothing and resolves false. They return
// Promises that reject (never throw): with a TypeError or RangeError for bad arguments, with
// ClosedError once the queue is closed.

import { options } from "./arguments.js";
import { reasonOf } from "./reason.js";
import { checkDelay } from "./options.js";

/**
 * What a job asks of its queue, by the job and its token.
 * @typedef {object} JobOps
 * @property {(job: Job, token: string) => Promise<boolean>} ack
 * @property {(job: Job, token: string, delayMs: number, reason: string, stack: string | undefined) => Promise<boolean>} nack
 * @property {(job: Job, token: string, ms: number | undefined) => Promise<boolean>} extend
 */

/** One delivery of an item: ack, nack or extend it while this delivery holds the lease. */
export class Job {
  /** @type {JobOps} */
  #ops;
  /** @type {string} */
  #token;

  /**
   * @param {JobOps} ops
   * @param {string} id
   * @param {any} value JSON data, of the type the caller gave its queue
   * @param {number} deadline
   * @param {number} attempt
   * @param {string} token
   * @param {string} [schedule] the schedule it is an occurrence of
   */
  constructor(ops, id, value, deadline, attempt, token, schedule) {
    this.#ops = ops;
    this.#token = token;
    /** The item's id. */
    this.id = id;
    /** The value as offered. */
    this.value = value;
    /** The deadline it was due at, epoch ms by the server's clock. */
    this.deadline = deadline;
    /** Which delivery this is: 1 the first, 2 after one nack or expired lease, ... */
    this.attempt = attempt;
    /** For an occurrence of a schedule, the schedule's id (the deadline is its due time); else undefined. */
    this.schedule = schedule;
  }

  /** Done: removes the item. Resolves false if this delivery had lost its lease (changes nothing). */
  async ack() {
    return this.#ops.ack(this, this.#token);
  }

  /**
   * Not done: the item comes back after `delayMs` (default 0), or goes to the dead letters
   * if this was its last attempt (`reason` is kept there: an Error's message, and its stack
   * beside it, js/engine/reason.js). Resolves false if the lease was lost.
   * @param {{ delayMs?: number, reason?: unknown }} [opts]
   */
  async nack(opts) {
    const { delayMs = 0, reason = "nack" } = options(opts, "options", ["delayMs", "reason"], "nack()");
    checkDelay(delayMs, "options.delayMs");
    const why = reasonOf(reason);
    return this.#ops.nack(this, this.#token, delayMs, why.reason, why.stack);
  }

  /**
   * Sets the lease to run out `ms` from now (default: the visibility timeout). Resolves false if it was lost.
   * @param {number} [ms]
   */
  async extend(ms) {
    if (ms !== undefined) {
      checkDelay(ms, "ms");
      if (ms <= 0) throw new RangeError(`ms must be positive, got ${ms}`);
    }
    return this.#ops.extend(this, this.#token, ms);
  }

  /**
   * The delivery a job is: its id and token, as the ack and extend scripts take them.
   * @param {Job} job
   * @returns {[string, string]}
   */
  static delivery(job) {
    return [job.id, job.#token];
  }
}
