// Wall-clock time (epoch ms, Date.now()) against the monotonic clock (performance.now()).
//
// Queues run on the monotonic clock; a wall-clock deadline (offerAt, scheduleAt, a
// snapshot) is converted once. Date.now() is whole milliseconds and lags the true time by
// up to 1 ms, and a thread can be preempted between two clock reads, so each conversion is
// made from bounds on the offset between the clocks and errs late, never early.

/**
 * Epoch ms minus performance.now(), as bounds: `low` is at most the true offset and `high`
 * at least it. Date.now() is read between two performance.now() readings, taking the
 * tightest of a few tries (a preempted try can be off by a whole time slice).
 */
export function clockOffset() {
  let low = -Infinity;
  let high = Infinity;
  for (let i = 0; i < 4 && high - low > 1.05; i++) {
    const before = performance.now();
    const wall = Date.now();
    const after = performance.now();
    // The true wall time at `before` is below wall + 1, at `after` at least wall.
    if (wall + 1 - before - (wall - after) < high - low) {
      low = wall - after;
      high = wall + 1 - before;
    }
  }
  return { low, high };
}

// The offset used for wall-to-monotonic conversions. Kept while the fresh bounds allow it,
// so that equal wall-clock deadlines offered a Date.now() tick apart convert to equal
// monotonic ones (FIFO ties hold); replaced when it would be early (above `high`: the wall
// clock went back) or is more than a tick behind (`low` above it: the wall clock went on).
let kept = NaN;

/** The monotonic deadline of an epoch-ms deadline: never before it, at most ~2 ms after. */
export function monotonicDeadline(epochMs) {
  const { low, high } = clockOffset();
  if (!(kept <= high) || low > kept + 1.05) kept = low;
  return epochMs - kept;
}
