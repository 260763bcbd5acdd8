// Gathers the calls made in one turn of the event loop into as few script runs as possible,
// as ioredis' auto-pipelining gathers commands: 10^4 concurrent offer() calls become 21 offer
// scripts, not 10^4. The first call of a turn is sent at once, so a lone awaited call waits
// for nothing; the calls after it in the same turn go together at the end of the turn.
//
// A batcher made `lazy` (acks) sends nothing at once: what a turn gathers goes when another
// script is run on the connection (which flushes it first, so order holds), or after the
// turn's pending I/O callbacks (setImmediate), whichever comes first. A consumer's handlers
// that finish in one turn so ack in one script, sent just before the take that follows them.
//
// A call whose entries go in several runs (offerMany of more than 500 items) resolves when
// all of them have answered; when some fail, it rejects with PartlyDone, naming the entries
// whose runs answered (each run is atomic: those took effect, the others did not or, for a
// run with no reply, may have).

import { setImmediate } from "node:timers";

const endOfTurn = Promise.resolve();

/**
 * @template E, R an entry, and its result
 */
export class Batcher {
  #size;
  #send;
  /** @type {E[]} */
  #entries = [];
  /** @type {{ start: number, end: number, resolve: (results: R[]) => void, reject: (e: unknown) => void }[]} */
  #callers = [];
  #turn = false; // a call was sent in this turn: later ones wait for its end
  #lazy;

  /**
   * @param {number} size entries per run at most
   * @param {(entries: E[]) => Promise<R[]>} send one run: resolves with one result per entry
   * @param {boolean} [lazy] whether the first call of a turn waits for the others too
   */
  constructor(size, send, lazy = false) {
    this.#size = size;
    this.#send = send;
    this.#lazy = lazy;
  }

  /**
   * Queues `entries` for a run; resolves with their results, in order.
   * @param {E[]} entries
   * @returns {Promise<R[]>}
   */
  add(entries) {
    if (entries.length === 0) return Promise.resolve([]);
    const start = this.#entries.length;
    for (const e of entries) this.#entries.push(e);
    const done = new Promise((resolve, reject) =>
      this.#callers.push({ start, end: this.#entries.length, resolve, reject }),
    );
    if (this.#lazy) {
      if (start === 0) setImmediate(() => this.flushNow());
      return done;
    }
    if (!this.#turn) {
      this.#turn = true;
      this.#flush();
      endOfTurn.then(() => {
        this.#turn = false;
        if (this.#entries.length) this.#flush();
      });
    }
    return done;
  }

  /**
   * Hands what is gathered to a run the caller makes itself (a statement that carries it along,
   * as a take carries the acks before it): the entries, and `settle(results)` (one per entry, in
   * order) or `fail(e)` for their callers. Nothing is sent for them here.
   * @returns {{ entries: E[], settle: (results: R[]) => void, fail: (e: unknown) => void }}
   */
  detach() {
    const entries = this.#entries;
    const callers = this.#callers;
    this.#entries = [];
    this.#callers = [];
    return {
      entries,
      settle: (results) => {
        for (const c of callers) c.resolve(results.slice(c.start, c.end));
      },
      fail: (e) => {
        for (const c of callers) c.reject(e);
      },
    };
  }

  /** Sends what is gathered now: another call must not overtake the ones before it. */
  flushNow() {
    if (this.#entries.length) this.#flush();
  }

  #flush() {
    const entries = this.#entries;
    const callers = this.#callers;
    this.#entries = [];
    this.#callers = [];
    const size = this.#size;
    const runs = [];
    for (let i = 0; i < entries.length; i += size) runs.push(this.#send(entries.slice(i, i + size)));
    if (runs.length === 1) {
      // The common case, one run: no need to gather results from several.
      runs[0].then(
        (results) => {
          for (const c of callers) c.resolve(callers.length === 1 ? results : results.slice(c.start, c.end));
        },
        (e) => {
          for (const c of callers) c.reject(e);
        },
      );
      return;
    }
    for (const c of callers) {
      const first = Math.floor(c.start / size);
      const last = Math.floor((c.end - 1) / size);
      const from = c.start - first * size;
      const to = c.end - first * size;
      if (first === last) {
        runs[first].then((results) => c.resolve(results.slice(from, to)), c.reject);
        continue;
      }
      Promise.allSettled(runs.slice(first, last + 1)).then((settled) => {
        const failed = settled.find((r) => r.status === "rejected");
        if (!failed) return c.resolve(settled.flatMap((r) => /** @type {any} */ (r).value).slice(from, to));
        /** @type {number[]} */
        const done = [];
        settled.forEach((r, k) => {
          if (r.status !== "fulfilled") return;
          const run = first + k;
          const end = Math.min(c.end, (run + 1) * size);
          for (let j = Math.max(c.start, run * size); j < end; j++) done.push(j - c.start);
        });
        c.reject(new PartlyDone(failed.reason, done));
      });
    }
  }
}

/**
 * A call whose entries went in several runs, some of which failed: `done` are the indexes (in
 * the call's entries) of those whose run answered, so took effect; `cause` is the first failure.
 */
export class PartlyDone extends Error {
  /**
   * @param {unknown} cause
   * @param {number[]} done
   */
  constructor(cause, done) {
    super(String(/** @type {any} */ (cause)?.message ?? cause), { cause });
    this.done = done;
  }
}
