// The takes waiting in one process, served first come first served: a line of waiters
// (js/engine/waiters.js), and beside it the set of those with a timeout, so that finding the
// earliest timeout costs O(takes with a timeout) and the others cost nothing. A take that
// leaves (aborted, timed out) is out of both at once, so neither holds it.

import { Waiters } from "./waiters.js";

/**
 * A waiting take().
 * @typedef {object} Taker
 * @property {(job: import("./job.js").Job | undefined) => void} resolve
 * @property {(reason: unknown) => void} reject
 * @property {number} until when its timeout passes (local ms), or Infinity
 * @property {AbortSignal | undefined} signal
 * @property {(() => void) | null} onAbort
 * @property {boolean} done settled, or about to be
 */

export class Takers {
  #line = new Waiters(false); // the connection keeps the process alive while a take waits
  /** @type {Set<Taker>} */
  #timed = new Set();

  /** Takes waiting. */
  get size() {
    return this.#line.size;
  }

  /** @param {Taker} taker */
  push(taker) {
    this.#line.push(taker);
    if (taker.until !== Number.POSITIVE_INFINITY) this.#timed.add(taker);
  }

  /** The first take, out of line; undefined when none waits. */
  shift() {
    const taker = /** @type {Taker | undefined} */ (this.#line.shift());
    if (taker) this.#timed.delete(taker);
    return taker;
  }

  /** @param {Taker} taker out of line, wherever it is */
  remove(taker) {
    this.#line.remove(taker);
    this.#timed.delete(taker);
  }

  /** The earliest timeout of a waiting take (local ms), or Infinity. */
  earliestTimeout() {
    let at = Number.POSITIVE_INFINITY;
    for (const t of this.#timed) if (t.until < at) at = t.until;
    return at;
  }

  /**
   * The takes whose timeout has passed at `now`, in call order, out of line and marked done.
   * @param {number} now
   */
  expired(now) {
    const out = [];
    for (const t of this.#timed) {
      if (t.until <= now) {
        this.remove(t);
        t.done = true;
        out.push(t);
      }
    }
    return out;
  }

  /** Every waiting take, in call order, all out of line. */
  clear() {
    this.#timed.clear();
    return /** @type {Taker[]} */ (this.#line.clear());
  }
}
