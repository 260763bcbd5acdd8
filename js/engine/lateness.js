// Lateness: how long after their deadlines items were handed out, as a histogram with about
// 3% relative precision, so that p50/p99 cost O(1) memory whatever the count. The same
// buckets and the same quantile as the core's (src/lateness.rs, behind `stats` in memory),
// for the engines whose deliveries happen outside the wasm (tarry-queue/redis, which never
// loads it); tests/js/lateness.test.mjs checks that both give the same figures.
//
// Buckets: 64 of 1/64 ms below 1 ms, then 32 per power of two up to 2^32 ms. Recording is
// O(1); a quantile walks the ~1,100 buckets once. While the latenesses recorded fall in few
// buckets (up to FEW), the counts are kept as a short list of (bucket, count) pairs instead of
// the 4 KiB of all buckets: ten thousand Redis queues in a process, each with its own
// histogram of a few deliveries, then hold a few hundred bytes each.

/** Buckets below 1 ms, each 1/64 ms wide. */
const FINE = 64;
/** Sub-buckets per power of two from 1 ms up. */
const SUB = 32;
/** Powers of two covered from 1 ms up (to about 2^32 ms). */
const OCTAVES = 32;
const MAX_COUNT = 2 ** 32 - 1;
/** Distinct buckets kept as a list before all buckets are allocated. */
const FEW = 16;

/** A lateness histogram in milliseconds. */
export class Lateness {
  /** @type {Uint32Array | null} counts per bucket, allocated once more than FEW buckets are used */
  #buckets = null;
  /** @type {number[] | null} until then: bucket, count, bucket, count, ... */
  #few = null;
  #count = 0;
  #max = 0;

  /**
   * Records one lateness (negative values count as 0).
   * @param {number} ms
   */
  record(ms) {
    // biome-ignore lint/complexity/useMathMinMax: NaN counts as 0 too, as in src/lateness.rs
    const v = ms > 0 ? ms : 0;
    const i = Math.min(bucketOf(v), FINE + SUB * OCTAVES - 1);
    this.#count++;
    if (v > this.#max) this.#max = v;
    const buckets = this.#buckets;
    if (buckets !== null) {
      if (buckets[i] !== MAX_COUNT) buckets[i]++;
      return;
    }
    const few = (this.#few ??= []);
    for (let k = 0; k < few.length; k += 2) {
      if (few[k] === i) {
        if (few[k + 1] !== MAX_COUNT) few[k + 1]++;
        return;
      }
    }
    few.push(i, 1);
    if (few.length > 2 * FEW) {
      const all = new Uint32Array(FINE + SUB * OCTAVES);
      for (let k = 0; k < few.length; k += 2) all[few[k]] = few[k + 1];
      this.#buckets = all;
      this.#few = null;
    }
  }

  /**
   * A histogram from counts by bucket (as another process or Redis kept them, with this
   * module's buckets) and the largest lateness.
   * @param {Iterable<[number, number]>} counts [bucket index, count]
   * @param {number} max
   */
  static of(counts, max) {
    const l = new Lateness();
    const buckets = new Uint32Array(FINE + SUB * OCTAVES);
    for (const [i, n] of counts) {
      if (Number.isInteger(i) && i >= 0 && i < buckets.length && n > 0) {
        buckets[i] = Math.min(MAX_COUNT, buckets[i] + n);
        l.#count += n;
      }
    }
    l.#buckets = buckets;
    l.#max = Number.isFinite(max) && max > 0 ? max : 0;
    return l;
  }

  /** Items recorded. */
  get count() {
    return this.#count;
  }

  /** The largest lateness recorded (0 when none). */
  get max() {
    return this.#max;
  }

  /**
   * The `q`-quantile (0 ≤ q ≤ 1), as the middle of its bucket, never above the max; 0 when
   * nothing was recorded.
   * @param {number} q
   */
  quantile(q) {
    if (this.#count === 0) return 0;
    const rank = Math.max(Math.ceil(Math.min(Math.max(q, 0), 1) * this.#count), 1);
    const at = (/** @type {number} */ i) => {
      const [lo, hi] = boundsOf(i);
      return Math.min((lo + hi) / 2, this.#max);
    };
    let seen = 0;
    const buckets = this.#buckets;
    if (buckets === null) {
      const few = /** @type {number[]} */ (this.#few);
      /** @type {number[]} the list's bucket indexes, in bucket order */
      const order = [];
      for (let k = 0; k < few.length; k += 2) order.push(k);
      order.sort((a, b) => few[a] - few[b]);
      for (const k of order) {
        seen += few[k + 1];
        if (seen >= rank) return at(few[k]);
      }
      return this.#max;
    }
    for (let i = 0; i < buckets.length; i++) {
      seen += buckets[i];
      if (seen >= rank) return at(i);
    }
    return this.#max;
  }
}

/** @param {number} ms at least 0 */
function bucketOf(ms) {
  if (ms < 1) return Math.trunc(ms * FINE);
  const octave = Math.floor(Math.log2(ms));
  const sub = Math.trunc((ms / 2 ** octave - 1) * SUB);
  return FINE + octave * SUB + Math.min(sub, SUB - 1);
}

/** @param {number} i */
function boundsOf(i) {
  if (i < FINE) return [i / FINE, (i + 1) / FINE];
  const octave = Math.trunc((i - FINE) / SUB);
  const sub = (i - FINE) % SUB;
  const base = 2 ** octave;
  return [base * (1 + sub / SUB), base * (1 + (sub + 1) / SUB)];
}
