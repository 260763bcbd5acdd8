// The one host timer of a queue or scheduler. The binding says when it should fire
// (Deadlines#wakeAt); this module arms the host's setTimeout for that, looked up at call
// time (window, worker, Node, Deno, workerd, and fake timers that replace it).

/** The longest wait a host timer takes (2³¹−1 ms, about 24.8 days); longer ones are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Timer {
  /** @type {ReturnType<typeof setTimeout> | null} */
  #id = null;
  /** The deadline armed for (on the queue's clock), or Infinity. */
  #at = Infinity;
  #clock;
  #keepAlive;
  #fire;
  /** Times armed so far. */
  arms = 0;

  /**
   * @param {{now(): number}} clock the queue's clock
   * @param {boolean} keepAlive false: the timer does not hold a Node or Deno process open
   * @param {() => void} onFire
   */
  constructor(clock, keepAlive, onFire) {
    this.#clock = clock;
    this.#keepAlive = keepAlive;
    this.#fire = () => {
      this.#id = null;
      this.#at = Infinity;
      onFire();
    };
  }

  /** Whether the timer is armed. */
  get armed() {
    return this.#id !== null;
  }

  /**
   * Arms the timer for `deadline` on the clock, or disarms it for Infinity; nothing to do
   * when it is armed for that already. A host that refuses a timer (workerd at module
   * scope) throws, and the timer is then disarmed (never two armed at once).
   */
  set(deadline) {
    if (deadline === this.#at) return;
    if (deadline === Infinity) return this.disarm();
    // Round up: a timer rounded down fires before the deadline, finds nothing due and
    // costs a second arm. A wait longer than the host takes is chained.
    const ms = Math.min(Math.max(Math.ceil(deadline - this.#clock.now()), 0), MAX_TIMER_MS);
    this.disarm();
    const id = setTimeout(this.#fire, ms);
    if (!this.#keepAlive) unref(id);
    this.#id = id;
    this.#at = deadline;
    this.arms++;
  }

  disarm() {
    if (this.#id !== null) clearTimeout(this.#id);
    this.#id = null;
    this.#at = Infinity;
  }
}

function unref(id) {
  if (typeof id === "object" && id !== null && typeof id.unref === "function") id.unref();
  else if (typeof Deno !== "undefined" && typeof Deno.unrefTimer === "function") Deno.unrefTimer(id);
}
