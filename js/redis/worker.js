// A process() worker: `concurrency` slots, each taking the next due item and running the
// handler on it. The handler's return acks the item; its throw nacks it, to come back after
// `retry(attempt, error)` ms, or, on its last attempt, to go to the dead letters (retry is
// not asked then: no retry follows). While a handler runs, its lease is held (the consumer
// extends it), so a slow handler keeps its item. A worker counts as running until its last
// handler has finished and acked, whenever close() was called: its queue's close() waits.

import { setMaxListeners } from "node:events";
import { ClosedError } from "../errors.js";

/** @typedef {import("./job.js").RedisJob} RedisJob */

/**
 * @typedef {object} WorkerParts
 * @property {(signal: AbortSignal) => Promise<RedisJob | undefined>} take the consumer's take
 * @property {{ hold(job: RedisJob): void, drop(job: RedisJob): void }} leases the leases kept while handlers run
 * @property {(value: any, job: RedisJob) => unknown} handler
 * @property {number} concurrency
 * @property {(attempt: number, error: unknown) => number} retry
 * @property {number} maxAttempts the queue's: the attempt after which no retry follows
 * @property {(error: unknown) => void} onerror
 * @property {() => void} ondone called once every slot has stopped
 */

export class Worker {
  #stop = new AbortController();
  /** @type {Promise<void>} every slot, done */
  #running;

  /** @param {WorkerParts} parts */
  constructor({ take, leases, handler, concurrency, retry, maxAttempts, onerror, ondone }) {
    const signal = this.#stop.signal;
    setMaxListeners(0, signal); // one listener per waiting slot: `concurrency` of them
    const slot = async () => {
      while (!signal.aborted) {
        let job;
        try {
          job = /** @type {RedisJob} */ (await take(signal));
        } catch (e) {
          if (signal.aborted || e instanceof ClosedError) return;
          onerror(e);
          continue;
        }
        await handle(job, leases, handler, (attempt, e) => (attempt >= maxAttempts ? 0 : retry(attempt, e)), onerror);
      }
    };
    this.#running = Promise.all(Array.from({ length: concurrency }, slot)).then(ondone);
  }

  /** Stops taking items; resolves when the running handlers have finished (and acked). */
  close() {
    this.#stop.abort();
    return this.#running;
  }
}

/**
 * Runs the handler on one job, its lease held meanwhile; then acks or nacks it.
 * @param {RedisJob} job
 * @param {WorkerParts["leases"]} leases
 * @param {WorkerParts["handler"]} handler
 * @param {WorkerParts["retry"]} retry
 * @param {WorkerParts["onerror"]} onerror
 */
async function handle(job, leases, handler, retry, onerror) {
  leases.hold(job);
  let failure = null;
  try {
    await handler(job.value, job);
  } catch (e) {
    failure = e ?? new Error(String(e));
  }
  leases.drop(job);
  try {
    if (failure === null) await job.ack();
    else {
      const delayMs = Number(retry(job.attempt, failure));
      await job.nack({ delayMs: Number.isFinite(delayMs) ? delayMs : 0, reason: failure });
    }
  } catch (e) {
    // Redis is unreachable: the lease runs out and the item comes back.
    onerror(e);
  }
}
