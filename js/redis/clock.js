// The server's clock as seen from this process. Redis decides what is due (TIME inside the
// scripts); this process needs the server time only to stamp when a call was made and to
// know when to wake up. Every script reply carries the server's time S, read somewhere
// between sending (t0) and receiving (t1) on this process's monotonic clock, so the offset
// server - local lies in [S - t1, S - t0]. The tightest bounds seen so far are kept, widened
// by an allowance for the two clocks drifting apart since they were seen:
//
// - upper bound: a call made at local time c happened at server time <= c + upper, so a delay
//   counted from there never comes out early (the script also caps it at its own TIME);
// - lower bound: at local time t the server's time is >= t + lower, so a timer set for
//   deadline - lower never fires before the server sees the deadline.

/** Allowed drift between the local monotonic clock and the server's clock: 100 ppm. */
const DRIFT = 1e-4;

/** Local time: this process's monotonic clock, in epoch ms. */
export const localNow = () => performance.timeOrigin + performance.now();

export class ServerClock {
  #lower = Number.NEGATIVE_INFINITY;
  #lowerAt = 0;
  #upper = Number.POSITIVE_INFINITY;
  #upperAt = 0;

  /** Learns from one reply: the server's time `server`, sent at `sent`, received at `received`. */
  sample(sent, server, received) {
    const lower = server - received;
    const upper = server - sent;
    // Bounds that contradict a new reading (the server's clock was set, or the reply came from
    // another node) are dropped for the reading's own.
    if (lower > this.upper(received) || upper < this.lower(received)) {
      this.#lower = Number.NEGATIVE_INFINITY;
      this.#upper = Number.POSITIVE_INFINITY;
    }
    if (lower >= this.lower(received)) {
      this.#lower = lower;
      this.#lowerAt = received;
    }
    if (upper <= this.upper(received)) {
      this.#upper = upper;
      this.#upperAt = received;
    }
  }

  lower(at) {
    return this.#lower - Math.abs(at - this.#lowerAt) * DRIFT;
  }

  upper(at) {
    return this.#upper + Math.abs(at - this.#upperAt) * DRIFT;
  }

  /** The latest server time a call made at local time `at` can have happened: "" if unknown. */
  stamp(at) {
    const upper = this.upper(at);
    return Number.isFinite(upper) ? (at + upper).toFixed(3) : "";
  }

  /** The earliest server time it can be at local time `at`. */
  serverNow(at = localNow()) {
    return at + this.lower(at);
  }

  /** The local time at which the server's clock has surely reached `server` (Infinity if unknown). */
  localAt(server) {
    if (server === Number.POSITIVE_INFINITY || this.#lower === Number.NEGATIVE_INFINITY) return server;
    // Solving t + lower(t) = server for t >= lowerAt: lower(t) = L - (t - t_L) * DRIFT.
    return (server - this.#lower - this.#lowerAt * DRIFT) / (1 - DRIFT);
  }
}
