// Numbers as the benchmark reports them: the median of samples, and short forms for tables.

/** The median of the finite numbers in `xs`, or null when there are none. */
export function median(xs) {
  const s = xs.filter((x) => x != null && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** 10^k for a power of ten, 3·10^k for three times one, else the number. */
export function pow10(n) {
  for (const [m, prefix] of [
    [1, ""],
    [3, "3·"],
  ]) {
    const k = Math.log10(n / m);
    if (Number.isInteger(k) && k > 0) return `${prefix}10^${k}`;
  }
  return n.toLocaleString("en");
}

/** 3 significant digits with k, M, G. */
export function short(x) {
  if (x == null || !Number.isFinite(x)) return "–";
  if (x === 0) return "0";
  if (x >= 1e9) return `${(x / 1e9).toPrecision(3)}G`;
  if (x >= 1e6) return `${(x / 1e6).toPrecision(3)}M`;
  if (x >= 1e3) return `${(x / 1e3).toPrecision(3)}k`;
  return x.toPrecision(3);
}

/** Nanoseconds: two decimals below 10, 3 significant digits below 1000, else whole. */
export function ns(x) {
  if (x == null || !Number.isFinite(x)) return "–";
  return x < 10 ? x.toFixed(2) : x < 1000 ? x.toPrecision(3) : Math.round(x).toLocaleString("en");
}
