// How the demo writes money, durations and countdowns.

export function euros(amount) {
  return `€${amount.toFixed(2)}`;
}

/** Milliseconds with as many decimals as are worth reading. */
export function ms(x) {
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}

export function seconds(x) {
  const s = x / 1000;
  if (s >= 120) return `${Math.round(s / 60)} min`;
  return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
}

/** Time left on an order: "due", "8.4 s", "42 s" or "29:59". */
export function countdown(x) {
  if (x <= 0) return "due";
  if (x >= 60_000) {
    const s = Math.floor(x / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }
  return x < 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.floor(x / 1000)} s`;
}
