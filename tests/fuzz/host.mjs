// A fake host for the JS-face fuzzer: a monotonic clock the fuzzer moves (handed to queues
// through their `clock` option), a wall clock (Date.now) that can step, and a timer host
// that replaces globalThis.setTimeout/clearTimeout (js/engine/timer.js looks them up at call time)
// and fires each timer when the fuzzer says: on time, early, late, several in one burst,
// or not at all; it can also refuse to arm (as workerd does at module scope).
//
// It checks what a host can see: the delay each timer asks for (a whole number of ms that
// setTimeout takes without overflowing), and that a queue never has two timers armed at
// once (a queue's timer callback is one function, so two live timers with the same
// callback are two timers of one queue).

/** setTimeout's longest delay: 2^31 − 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export class FakeHost {
  /** The monotonic clock, in ms; only the fuzzer moves it, never back. */
  now;
  /** Date.now() is floor(wallBase + wallShift + now). */
  wallBase;
  wallShift = 0;
  /** Live timers by id. */
  live = new Map();
  /** The timer whose callback is running, or null. */
  firing = null;
  /** How many of the next setTimeout calls throw `refusal`. */
  refusals = 0;
  refusal = new Error("the fake host refused a timer");
  /** When set, called with each new timer's ms to say how much later (or earlier) it fires. */
  jitter = () => 0;
  /** Called with each new timer (after it is recorded), e.g. to learn whose it is. */
  onArm = () => {};
  /** What the host saw going wrong; the fuzzer fails the run on any. */
  problems = [];
  arms = 0;
  fires = 0;
  refused = 0;
  #nextId = 1;
  #saved = null;

  /** @param {{start: number, wallBase: number}} opts */
  constructor({ start, wallBase }) {
    this.now = start;
    this.wallBase = wallBase;
    this.clock = () => this.now;
  }

  /** The wall-clock offset Date.now() follows now (epoch ms minus the monotonic clock). */
  get wallOffset() {
    return this.wallBase + this.wallShift;
  }

  install() {
    const saved = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout, now: Date.now };
    this.#saved = saved;
    globalThis.setTimeout = (fn, ms, ...args) => this.#set(fn, ms, args);
    globalThis.clearTimeout = (id) => this.#clear(id);
    Date.now = () => Math.floor(this.wallOffset + this.now);
  }

  uninstall() {
    const saved = this.#saved;
    if (saved === null) return;
    globalThis.setTimeout = saved.setTimeout;
    globalThis.clearTimeout = saved.clearTimeout;
    Date.now = saved.now;
    this.#saved = null;
  }

  #set(fn, ms, args) {
    if (this.refusals > 0) {
      this.refusals--;
      this.refused++;
      throw this.refusal;
    }
    if (typeof fn !== "function") this.problems.push(`setTimeout called with a ${typeof fn} callback`);
    if (!Number.isInteger(ms) || ms < 0 || ms > MAX_TIMER_MS || Object.is(ms, -0)) {
      this.problems.push(`setTimeout asked for ${ms} ms (a host wants a whole number in [0, 2^31-1])`);
    }
    for (const t of this.live.values()) {
      if (t.fn === fn) this.problems.push(`a second host timer armed for one queue (${t.ms} ms and ${ms} ms)`);
    }
    const n = this.#nextId++;
    const timer = { n, fn, args, ms, armedAt: this.now, due: 0, unrefd: false, id: null };
    // Some hosts give numbers (browsers, Deno), Node an object with unref().
    timer.id = n % 2 === 0 ? n : { n, unref: () => (timer.unrefd = true) };
    timer.due = this.now + ms + this.jitter(ms);
    if (timer.due < this.now) timer.due = this.now;
    this.live.set(timer.id, timer);
    this.arms++;
    this.onArm(timer);
    return timer.id;
  }

  #clear(id) {
    this.live.delete(id);
  }

  /** Runs one live timer's callback now (whatever its due time). Returns what it threw, or undefined. */
  fire(timer) {
    if (!this.live.delete(timer.id)) return undefined;
    const outer = this.firing;
    this.firing = timer;
    this.fires++;
    try {
      timer.fn(...timer.args);
      return undefined;
    } catch (e) {
      // A real host reports an exception thrown by a timer callback as uncaught.
      this.problems.push(`a timer callback threw: ${e?.stack ?? e}`);
      return e;
    } finally {
      this.firing = outer;
    }
  }

  /** Live timers due by now, earliest first (ties in arming order). */
  due() {
    return [...this.live.values()].filter((t) => t.due <= this.now).sort((a, b) => a.due - b.due || a.n - b.n);
  }
}
