// The single-timer wrapper that the plain-JS peers share with tarry's design: items live in
// a priority store ordered by (deadline, sequence); while someone waits in take(), exactly
// one host timer is armed, for the head's deadline. A timer that fires before
// performance.now() reaches the head's deadline (Node's timers run on a millisecond clock)
// delivers nothing and is armed again, so nothing is ever handed out early.
//
// A store has: size, insert(deadline, value) -> handle, remove(handle) -> value | undefined,
// headDeadline() -> number (Infinity when empty), popHead() -> value.

const MAX_TIMER_MS = 2 ** 31 - 1;

export class TimerQueue {
  #store;
  /** A past clock reading: a head due by then is due now (the clock is monotonic). */
  #seen = -Infinity;
  /** Waiting take() resolvers, FIFO with a head index (Array#shift is O(n) on big arrays). */
  #takers = [];
  #takersHead = 0;
  #timer = null;
  #target = Infinity;
  #fire = () => this.#onTimer();
  stats = { timerArms: 0, wakes: 0, earlyWakes: 0 };

  constructor(store) {
    this.#store = store;
  }

  get size() {
    return this.#store.size;
  }

  offer(value, delayMs) {
    const now = performance.now();
    if (now > this.#seen) this.#seen = now;
    const deadline = now + delayMs;
    const h = this.#store.insert(deadline, value);
    if (this.#takersHead !== this.#takers.length) {
      if (delayMs <= 0) this.#deliver();
      else if (deadline < this.#target) this.#settle();
    }
    return h;
  }

  /** Batch offer with one clock reading, as tarry's offerMany(). */
  offerMany(values, delays) {
    const now = performance.now();
    if (now > this.#seen) this.#seen = now;
    const store = this.#store;
    const handles = new Array(values.length);
    let earliest = Infinity;
    for (let i = 0; i < values.length; i++) {
      const deadline = now + delays[i];
      handles[i] = store.insert(deadline, values[i]);
      if (deadline < earliest) earliest = deadline;
    }
    if (this.#takersHead !== this.#takers.length) {
      if (earliest <= now) this.#deliver();
      else if (earliest < this.#target) this.#settle();
    }
    return handles;
  }

  cancel(handle) {
    const v = this.#store.remove(handle);
    if (v !== undefined && this.#takersHead !== this.#takers.length) this.#settle();
    return v;
  }

  poll() {
    const store = this.#store;
    const d = store.headDeadline();
    if (d === Infinity) return undefined;
    if (d > this.#seen) {
      const now = performance.now();
      this.#seen = now;
      if (d > now) return undefined;
    }
    const v = store.popHead();
    if (this.#takersHead !== this.#takers.length) this.#settle();
    return v;
  }

  drain(max = Infinity) {
    const out = [];
    const store = this.#store;
    while (out.length < max) {
      const d = store.headDeadline();
      if (d === Infinity) break;
      if (d > this.#seen) {
        const now = performance.now();
        this.#seen = now;
        if (d > now) break;
      }
      out.push(store.popHead());
    }
    return out;
  }

  take() {
    if (this.#takersHead === this.#takers.length) {
      const v = this.poll();
      if (v !== undefined) return Promise.resolve(v);
    }
    return new Promise((resolve) => {
      this.#takers.push(resolve);
      this.#settle();
    });
  }

  close() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#target = Infinity;
  }

  #onTimer() {
    this.#timer = null;
    this.#target = Infinity;
    this.stats.wakes++;
    const d = this.#store.headDeadline();
    if (!(d <= performance.now())) this.stats.earlyWakes++;
    this.#deliver();
  }

  /** Hands due items to waiting takes in call order, then re-arms. */
  #deliver() {
    const store = this.#store;
    const takers = this.#takers;
    while (this.#takersHead !== takers.length) {
      const d = store.headDeadline();
      if (d === Infinity) break;
      if (d > this.#seen) {
        const now = performance.now();
        this.#seen = now;
        if (d > now) break;
      }
      const resolve = takers[this.#takersHead];
      takers[this.#takersHead++] = undefined;
      resolve(store.popHead());
    }
    if (this.#takersHead === takers.length) {
      takers.length = 0;
      this.#takersHead = 0;
    }
    this.#settle();
  }

  /** Keeps the rule: one timer, armed for the head's deadline, exactly while someone waits. */
  #settle() {
    const target = this.#takersHead !== this.#takers.length ? this.#store.headDeadline() : Infinity;
    if (target === this.#target) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#target = target;
    if (target === Infinity) return;
    // Round up: a timer rounded down would fire before the deadline and cost a second arm.
    const ms = Math.min(Math.max(Math.ceil(target - performance.now()), 0), MAX_TIMER_MS);
    this.#timer = setTimeout(this.#fire, ms);
    this.stats.timerArms++;
  }
}
