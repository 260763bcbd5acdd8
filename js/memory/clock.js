// A queue's clock: the one function the JS face reads the time through, and the bridge
// from wall-clock deadlines (epoch ms, Date.now()) to it.
//
// By default the clock is performance.now(), looked up at each call, so fake timers that
// replace it (sinon, Jest, Vitest with `performance` faked) are followed; the `clock`
// option takes any function returning monotonic milliseconds, e.g. `() => Date.now()` under
// node:test's mock.timers, which fakes Date but not performance.
//
// A wall-clock deadline (offerAt, scheduleAt, a snapshot) is converted once, at the call.
// Date.now() is whole milliseconds and a thread can be preempted between two clock reads,
// so the offset between the clocks is known only within bounds; a conversion errs late,
// never early.

/** performance.now(), looked up at call time. */
const hostNow = () => performance.now();

/** A forward step of the offset bigger than its reading's uncertainty: the wall clock moved. */
const STEP_MS = 1.05;

export class Clock {
  /** The time now, in milliseconds on this clock. */
  now;
  // Offsets (epoch ms minus this clock) used for conversions, per range of wall-clock
  // deadlines: `#off` for those after `#oldMax`, `#oldOff` for those up to it. Within a
  // range the offset only goes down, so an equal deadline converted later never comes out
  // earlier (FIFO ties hold) and every conversion is at or after the fresh one (never early).
  #off = NaN;
  #max = -Infinity;
  #oldOff = Infinity;
  #oldMax = -Infinity;

  /** @param {(() => number) | undefined} now */
  constructor(now = hostNow) {
    this.now = now;
  }

  /**
   * Epoch ms minus this clock, as bounds: `low` is at most the true offset and `high` at
   * least it. Date.now() is read between two readings of this clock, taking the tightest
   * of a few tries (a preempted try can be off by a whole time slice).
   */
  offset() {
    let low = -Infinity;
    let high = Infinity;
    for (let i = 0; i < 4 && high - low > STEP_MS; i++) {
      const before = this.now();
      const wall = Date.now();
      const after = this.now();
      // The true wall time at `before` is below wall + 1, at `after` at least wall.
      if (wall + 1 - before - (wall - after) < high - low) {
        low = wall - after;
        high = wall + 1 - before;
      }
    }
    return { low, high };
  }

  /**
   * The deadline on this clock of the wall-clock time `epochMs`: never before it as the
   * clocks stand now, and after the deadline of any equal one converted earlier. After the
   * wall clock steps forward by J, deadlines up to the latest one converted before the step
   * stay behind it (up to J late); later ones convert fresh. `low`: an `offset().low` read
   * for a batch.
   */
  fromEpoch(epochMs, low = this.offset().low) {
    if (!(low <= this.#off + STEP_MS)) {
      // The first conversion, or the wall clock stepped forward: a new range begins.
      if (this.#max !== -Infinity) {
        this.#oldOff = Math.min(this.#oldOff, this.#off);
        this.#oldMax = Math.max(this.#oldMax, this.#max);
        this.#max = -Infinity;
      }
      this.#off = low;
    } else if (low < this.#off) {
      this.#off = low;
    }
    if (epochMs <= this.#oldMax) {
      if (low < this.#oldOff) this.#oldOff = low;
      return epochMs - this.#oldOff;
    }
    if (epochMs > this.#max) this.#max = epochMs;
    return epochMs - this.#off;
  }

  /** The wall-clock time (epoch ms, rounded up) of a deadline on this clock; `high`: an `offset().high`. */
  toEpoch(deadline, high = this.offset().high) {
    return Math.ceil(deadline + high);
  }
}
