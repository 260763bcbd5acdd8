// The server's clock as seen from this process. Redis decides what is due (TIME inside the
// scripts); this process needs the server time only to stamp when a call was made and to
// know when to wake up. Every script reply carries the server's time S, read somewhere
// between sending (t0) and receiving (t1) on this process's monotonic clock, so the offset
// server - local lies in [S - t1, S - t0]. The tightest bounds seen so far are kept, widened
// by an allowance for the two clocks drifting apart since they were seen:
//
// - upper bound: a call made at local time c happened at server time <= c + upper, so a delay
//   counted from there never comes out early (the script also caps it at its own TIME). The
//   monotonic clock stands still while the machine sleeps (and a test may stop it), while the
//   server's runs on: so a call also carries how far the wall clock is ahead of the monotonic
//   one, and what that lead gained since the bound was learned is added to it, with 1 ms for
//   Date.now()'s whole ms (a sleep of 3 s makes the bound 3 s later, never early; a wall clock
//   set forward only makes it later);
// - lower bound: at local time t the server's time is >= t + lower, so a timer set for
//   deadline - lower never fires before the server sees the deadline.
//
// The bounds are only as tight as the quickest round trip seen: replies that waited behind a
// burst of calls (a thousand queues opening at once) leave them tens of ms apart, which a
// consumer's wake and an offer's stamp then pay as lateness. So whoever keeps the estimate
// may be told after each reply (`onSample`) and, while the bounds are wider than TIGHT_MS,
// send a bare TIME of its own (js/redis/client.js does, at most one on its way, backing off).

/** Allowed drift between the local monotonic clock and the server's clock: 100 ppm. */
const DRIFT = 1e-4;

/** Bounds this close (ms) need no reading of their own. */
export const TIGHT_MS = 2;

/** Local time: this process's monotonic clock, in epoch ms. */
export const localNow = () => performance.timeOrigin + performance.now();

/**
 * When a call was made: its local time, and the wall clock's lead over the monotonic clock
 * then (which grows by the time the monotonic clock stood still).
 * @typedef {{ at: number, lead: number }} Moment
 */

/** @returns {Moment} */
export function moment() {
  const at = localNow();
  return { at, lead: Date.now() - at };
}

/**
 * How long the monotonic clock stood still, at most, from the growth of the wall clock's lead
 * over it as two moments measured it. Date.now() counts whole ms, so each lead is up to 1 ms
 * short of the truth, and a growth of g measured means at most g + 1: a suspend is counted with
 * that 1 ms more, so that no stamp after it is early. A growth of 1 ms or less is the rounding
 * of two readings of running clocks (a suspend lasts far longer): nothing is added.
 * @param {number} grown ms
 */
function stoodStill(grown) {
  return grown > 1 ? grown + 1 : 0;
}

export class ServerClock {
  #lower = Number.NEGATIVE_INFINITY;
  #lowerAt = 0;
  #upper = Number.POSITIVE_INFINITY;
  #upperAt = 0;
  #upperLead = 0;
  #onSample;

  /** @param {() => void} [onSample] called after each reply learned from */
  constructor(onSample) {
    this.#onSample = onSample;
  }

  /**
   * Learns from one reply: the server's time `server`, sent at `sent` (a moment), received at
   * local time `received`.
   * @param {Moment} sentAt
   * @param {number} server
   * @param {number} received
   */
  sample({ at: sent, lead }, server, received) {
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
      this.#upperLead = lead;
    }
    this.#onSample?.();
  }

  /** How far apart the bounds are at local time `at` (Infinity while either is unknown). */
  width(at = localNow()) {
    return this.upper(at) - this.lower(at);
  }

  lower(at) {
    return this.#lower - Math.abs(at - this.#lowerAt) * DRIFT;
  }

  upper(at) {
    return this.#upper + Math.abs(at - this.#upperAt) * DRIFT;
  }

  /**
   * The latest server time a call made at `when` can have happened: "" if unknown (the
   * script then counts from its own TIME).
   * @param {Moment} when
   */
  stamp({ at, lead }) {
    const upper = this.upper(at) + stoodStill(lead - this.#upperLead);
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
