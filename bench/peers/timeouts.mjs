// What most code does today: one setTimeout per item, a Map from id to timer for cancel.
// Fired items wait in a FIFO (head index, not Array#shift) for poll() or a waiting take().
// Nothing re-checks performance.now() when a timer fires: Node's millisecond timer clock
// lets some fire before their deadline, and this peer reports that as it happens.

export class TimeoutDelayQueue {
  #timers = new Map();
  #nextId = 1;
  #ready = [];
  #readyHead = 0;
  #takers = [];
  #takersHead = 0;
  #fire = (id, value) => this.#onTimer(id, value);
  stats = { timerArms: 0 };

  get size() {
    return this.#timers.size + this.#ready.length - this.#readyHead;
  }

  offer(value, delayMs) {
    const id = this.#nextId++;
    this.#timers.set(id, setTimeout(this.#fire, Math.max(delayMs, 0), id, value));
    this.stats.timerArms++;
    return id;
  }

  cancel(id) {
    const t = this.#timers.get(id);
    if (t === undefined) return undefined;
    clearTimeout(t);
    this.#timers.delete(id);
    return true;
  }

  poll() {
    if (this.#readyHead === this.#ready.length) return undefined;
    const v = this.#ready[this.#readyHead];
    this.#ready[this.#readyHead++] = undefined;
    if (this.#readyHead === this.#ready.length) {
      this.#ready.length = 0;
      this.#readyHead = 0;
    }
    return v;
  }

  drain(max = Infinity) {
    const out = [];
    for (let v; out.length < max && (v = this.poll()) !== undefined; ) out.push(v);
    return out;
  }

  take() {
    const v = this.poll();
    if (v !== undefined) return Promise.resolve(v);
    return new Promise((resolve) => this.#takers.push(resolve));
  }

  close() {
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }

  #onTimer(id, value) {
    this.#timers.delete(id);
    if (this.#takersHead !== this.#takers.length) {
      const resolve = this.#takers[this.#takersHead];
      this.#takers[this.#takersHead++] = undefined;
      if (this.#takersHead === this.#takers.length) {
        this.#takers.length = 0;
        this.#takersHead = 0;
      }
      resolve(value);
    } else {
      this.#ready.push(value);
    }
  }
}
