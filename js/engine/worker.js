// A process() worker: `concurrency` slots, each taking the next due item and running the
// handler on it. The handler's return acks the item; its throw nacks it, to come back after
// `retry(attempt, error)` ms, or, on its last attempt, to go to the dead letters (retry is
// not asked then: no retry follows). While a handler runs, its lease is held (the consumer
// extends it), so a slow handler keeps its item. A worker counts as running until its last
// handler has finished and acked, whenever close() was called: its queue's close() waits.
//
// A slot takes its next item as soon as its handler has returned: the ack (or nack) is on its
// way meanwhile, not awaited by the slot. The connection sends calls in the order they were
// made, so that ack reaches Redis before the take it was made before; the acks of one turn go
// as one script (js/engine/batch.js). So the slots freed in one turn are all back by the next
// take script, which takes as many items as there are free slots (js/redis/consumer.js).

import { setMaxListeners } from "node:events";
import { ClosedError } from "./errors.js";

/** @typedef {import("./job.js").Job} Job */

/**
 * @typedef {object} WorkerParts
 * @property {(signal: AbortSignal) => Promise<Job | undefined>} take the consumer's take
 * @property {{ hold(job: Job): void, drop(job: Job): void }} leases the leases kept while handlers run
 * @property {(value: any, job: Job) => unknown} handler
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
    /** @type {Set<Promise<void>>} the acks and nacks on their way */
    const settling = new Set();
    const slot = async () => {
      while (!signal.aborted) {
        let job;
        try {
          job = /** @type {Job} */ (await take(signal));
        } catch (e) {
          if (signal.aborted || e instanceof ClosedError) return;
          onerror(e);
          continue;
        }
        const { settle } = await handle(job, leases, handler, (attempt, e) =>
          attempt >= maxAttempts ? 0 : retry(attempt, e),
        );
        // Redis unreachable: onerror hears of it, the lease runs out and the item comes back.
        const held = settle.then(() => {}, onerror);
        settling.add(held);
        held.then(() => settling.delete(held));
      }
    };
    this.#running = Promise.all(Array.from({ length: concurrency }, slot))
      .then(() => Promise.all(settling))
      .then(ondone);
  }

  /** Stops taking items; resolves when the running handlers have finished (and acked). */
  close() {
    this.#stop.abort();
    return this.#running;
  }
}

/**
 * Runs the handler on one job, its lease held meanwhile; then acks or nacks it. Resolves once
 * the handler has returned, with the ack or nack on its way (`settle`: wrapped, so that this
 * does not wait for it).
 * @param {Job} job
 * @param {WorkerParts["leases"]} leases
 * @param {WorkerParts["handler"]} handler
 * @param {WorkerParts["retry"]} retry
 * @returns {Promise<{ settle: Promise<unknown> }>}
 */
async function handle(job, leases, handler, retry) {
  leases.hold(job);
  let failure = null;
  try {
    await handler(job.value, job);
  } catch (e) {
    failure = e ?? new Error(String(e));
  }
  leases.drop(job);
  try {
    if (failure === null) return { settle: job.ack() };
    const delayMs = Number(retry(job.attempt, failure));
    return { settle: job.nack({ delayMs: Number.isFinite(delayMs) ? delayMs : 0, reason: failure }) };
  } catch (e) {
    return { settle: Promise.reject(e) }; // retry() threw
  }
}
