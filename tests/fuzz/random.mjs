// A small seeded generator for the fuzzers and the soak: the same seed gives the same run.
// sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128 bits of state, passes
// PractRand, and four 32-bit additions per number; seeded through splitmix32 so that close
// seeds (1, 2, 3…) give unrelated streams. `fork(label)` derives an independent generator
// from this one's seed and a label, so that one step's choices do not shift when an
// earlier step is left out (what shrinking relies on).

function splitmix32(a) {
  return () => {
    a = (a + 0x9e3779b9) | 0;
    let z = a;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  };
}

/** A 32-bit hash of a string (FNV-1a), for labels. */
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export class Random {
  #a;
  #b;
  #c;
  #d;
  /** The seed this generator was made from (a uint32). */
  seed;

  /** @param {number} seed any integer (taken modulo 2^32) */
  constructor(seed) {
    this.seed = seed >>> 0;
    const s = splitmix32(this.seed);
    this.#a = s();
    this.#b = s();
    this.#c = s();
    this.#d = s();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32() {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float() {
    return this.u32() / 4294967296;
  }

  /** An integer in [0, n). */
  int(n) {
    return Math.floor(this.float() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p) {
    return this.float() < p;
  }

  /** One element of a non-empty array. */
  pick(xs) {
    return xs[this.int(xs.length)];
  }

  /** One of `[weight, value]` pairs, by weight. */
  weighted(pairs) {
    let total = 0;
    for (const [w] of pairs) total += w;
    let r = this.float() * total;
    for (const [w, v] of pairs) {
      r -= w;
      if (r < 0) return v;
    }
    return pairs[pairs.length - 1][1];
  }

  /** An independent generator for `label`, from this one's seed (not its position). */
  fork(label) {
    return new Random(this.seed ^ hash(String(label)));
  }
}

/** A random seed for a run that was not given one. */
export function freshSeed() {
  return (Math.random() * 4294967296) >>> 0;
}
