// What becomes of a delivery of a RedisDelayQueue once js/redis/consumer.js has handed it out:
//
// - its outcome, by its token (`ops`, what each Job asks of its queue: js/engine/job.js): ack()
//   (the acks made in one turn gathered into one ack script per ACK_BATCH, js/engine/batch.js),
//   nack() (back after its delay, or into the dead letters after maxAttempts) and extend(), each
//   a script that changes the item only while this delivery's token holds the lease;
// - `Leases`: the leases of running process() handlers, extended every visibilityTimeout / 3
//   while they run (only ever longer: a lease its handler extended further stays so), in one
//   extend script for all of them, run when the consumer's one alarm rings for it.
//
// Each reply that tells the earliest head or lease expiry goes to the consumer, which re-arms
// its alarm for it; the events (acked, nacked, dead) go to the queue's `tell`.

import { localNow, moment } from "../engine/clock.js";
import { Job } from "../engine/job.js";
import { SCRIPTS } from "./scripts.js";

/** Items per ack script at most: more are split, so that no script holds Redis for long. */
const ACK_BATCH = 500;

/**
 * What the outcomes of a queue's deliveries need of it.
 * @typedef {object} Queue
 * @property {import("./connection.js").Connection} conn
 * @property {import("./options.js").QueueOptions} options
 * @property {string} channel the head channel
 * @property {(type: string, detail: () => object) => void} tell an event of this process
 * @property {() => void} vanished a script found the queue's sequence counter gone (js/redis/durability.js)
 * @property {(head: number) => void} sawHead a reply told the head's deadline (server ms)
 * @property {(leaseHead: number) => void} sawLeases a reply told the earliest lease expiry (server ms)
 */

/**
 * What a Job of `queue` asks of it: ack, nack and extend by its token.
 * @param {Queue} queue
 * @returns {import("../engine/job.js").JobOps}
 */
export function outcomesOf(queue) {
  const { conn, options, channel, tell } = queue;
  /** @type {import("../engine/batch.js").Batcher<[string, string], boolean>} */
  const acks = conn.batcher(SCRIPTS.ack, ACK_BATCH, (deliveries) => conn.run(SCRIPTS.ack, { deliveries }), true);
  return {
    ack: async (job, token) => {
      const held = (await acks.add([[job.id, token]]))[0];
      if (held) tell("acked", () => ({ id: job.id }));
      return held;
    },
    nack: async (job, token, delayMs, reason, stack) => {
      const at = moment();
      const { clockTolerance: tolerance, maxAttempts } = options;
      const params = () => ({
        channel,
        stamp: conn.clock.stamp(at),
        tolerance,
        id: job.id,
        token,
        delayMs,
        maxAttempts,
        reason,
        stack: stack ?? "",
      });
      const { held, dead, head, vanished } = await conn.run(SCRIPTS.nack, params);
      if (vanished) queue.vanished();
      queue.sawHead(head);
      if (dead) tell("dead", () => ({ id: job.id, reason }));
      else if (held) tell("nacked", () => ({ id: job.id, attempt: job.attempt, delayMs, reason }));
      return held;
    },
    extend: async (job, token, ms) => {
      /** @type {[string, string][]} */
      const deliveries = [[job.id, token]];
      const params = { ms: ms ?? options.visibilityTimeout, longer: false, deliveries };
      const { leaseHead, held } = await conn.run(SCRIPTS.extend, params);
      queue.sawLeases(leaseHead);
      return held[0];
    },
  };
}

/** The leases of running process() handlers, extended every visibilityTimeout / 3 while they run. */
export class Leases {
  #conn;
  #visibility;
  #sawLeases;
  #arm;
  /** @type {Set<Job>} jobs whose process() handler runs */
  #extending = new Set();
  #extendAt = Number.POSITIVE_INFINITY;

  /**
   * @param {import("./connection.js").Connection} conn
   * @param {number} visibilityTimeout
   * @param {(leaseHead: number) => void} sawLeases a reply told the earliest lease expiry
   * @param {() => void} arm re-arms the consumer's alarm (for `at`, among the rest)
   */
  constructor(conn, visibilityTimeout, sawLeases, arm) {
    this.#conn = conn;
    this.#visibility = visibilityTimeout;
    this.#sawLeases = sawLeases;
    this.#arm = arm;
  }

  /** When the next extension is due (local ms), Infinity while no handler runs. */
  get at() {
    return this.#extendAt;
  }

  /** A handler starts on `job`: its lease is extended until drop(). @param {Job} job */
  hold = (job) => {
    this.#extending.add(job);
    if (this.#extendAt === Number.POSITIVE_INFINITY) {
      this.#extendAt = localNow() + this.#visibility / 3;
      this.#arm();
    }
  };

  /** @param {Job} job its handler is done */
  drop = (job) => {
    this.#extending.delete(job);
  };

  /**
   * The alarm rang at `now`: extends the leases if that is due; returns whether it was.
   * @param {number} now local ms
   */
  extendIfDue(now) {
    if (now < this.#extendAt) return false;
    const jobs = [...this.#extending];
    this.#extendAt = jobs.length ? localNow() + this.#visibility / 3 : Number.POSITIVE_INFINITY;
    if (!jobs.length) return true;
    // Only ever longer: a lease its handler extended further (job.extend) stays so.
    const params = { ms: this.#visibility, longer: true, deliveries: jobs.map(Job.delivery) };
    this.#conn.run(SCRIPTS.extend, params).then(
      ({ leaseHead }) => this.#sawLeases(leaseHead),
      (e) => this.#conn.report(e),
    );
    return true;
  }
}
