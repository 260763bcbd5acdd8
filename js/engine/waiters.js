// Waiters: calls that wait in line (takes for an item, puts for room), first come first
// served. An array with a head index, not a Set or Array#shift: taking the first of a Set
// skips the holes its deletions left (O(n) each), and shift() copies a large array.
// A waiter that leaves early (aborted, timed out) is only marked; the line skips it and
// compacts once most of it is such marks, so every operation is amortised O(1).
//
// A line that keeps the process alive holds it open (timer.js) while anyone is in line,
// whether or not a timer is armed: a take waiting on an empty queue keeps a Node or Deno
// process running, as a pending setTimeout would.

import { holdProcess, releaseProcess } from "./timer.js";

/** A line of waiters; each is an object this line may mark with `waiting`. */
export class Waiters {
  #line = [];
  #head = 0;
  #size = 0;
  #keepAlive;

  /** @param {boolean} keepAlive whether waiters in line hold the process open */
  constructor(keepAlive) {
    this.#keepAlive = keepAlive;
  }

  /** Waiters in line. */
  get size() {
    return this.#size;
  }

  push(waiter) {
    waiter.waiting = true;
    this.#line.push(waiter);
    if (this.#size++ === 0 && this.#keepAlive) holdProcess();
  }

  /** The first waiter, still in line; undefined when none. */
  peek() {
    const line = this.#line;
    while (this.#head < line.length && !line[this.#head].waiting) line[this.#head++] = undefined;
    return line[this.#head];
  }

  /** The first waiter, out of line; undefined when none. */
  shift() {
    const w = this.peek();
    if (w !== undefined) this.remove(w);
    return w;
  }

  /** Takes a waiter out of line wherever it is; false if it was not in line. */
  remove(waiter) {
    if (!waiter.waiting) return false;
    waiter.waiting = false;
    this.#size--;
    const line = this.#line;
    if (this.#size === 0) {
      this.#line = [];
      this.#head = 0;
      if (this.#keepAlive) releaseProcess();
    } else if (line.length - this.#head > 64 && this.#size * 2 < line.length - this.#head) {
      this.#line = line.slice(this.#head).filter((w) => w.waiting);
      this.#head = 0;
    }
    return true;
  }

  /** Every waiter, in order, all out of line. */
  clear() {
    const out = this.#line.slice(this.#head).filter((w) => w.waiting);
    for (const w of out) w.waiting = false;
    this.#line = [];
    this.#head = 0;
    if (this.#size !== 0 && this.#keepAlive) releaseProcess();
    this.#size = 0;
    return out;
  }
}
