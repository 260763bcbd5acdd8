// Reproducible inputs for the benchmarks: every implementation gets the same numbers.

/** mulberry32: reproducible uniform numbers in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `out` filled with uniform numbers in [lo, hi) from `r`. */
export function fill(out, lo, hi, r) {
  for (let i = 0; i < out.length; i++) out[i] = lo + r() * (hi - lo);
  return out;
}

/** n uniform numbers in [lo, hi) from the generator seeded with `seed`. */
export const uniform = (n, lo, hi, seed) => fill(new Float64Array(n), lo, hi, rng(seed));

/** k distinct indices of 0..n-1 in random order (partial Fisher–Yates) from `r`. */
export function sample(n, k, r) {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(r() * (n - i));
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p.subarray(0, k);
}
