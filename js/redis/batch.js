// Gathers the calls made in one turn of the event loop into as few script runs as possible,
// as ioredis' auto-pipelining gathers commands: 10^4 concurrent offer() calls become 20 offer
// scripts of 500 items, not 10^4 scripts. A lone awaited call still goes out at once (the
// batch is sent from a microtask, before the event loop turns).

export class Batcher {
  #size;
  #send;
  #entries = [];
  #callers = [];
  #scheduled = false;

  /**
   * @param {number} size entries per run at most
   * @param {(entries: any[]) => Promise<any[]>} send one run: resolves with one result per entry
   */
  constructor(size, send) {
    this.#size = size;
    this.#send = send;
  }

  /** Queues `entries` for the next run(s); resolves with their results, in order. */
  add(entries) {
    if (entries.length === 0) return Promise.resolve([]);
    const start = this.#entries.length;
    for (const e of entries) this.#entries.push(e);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#flush());
    }
    return new Promise((resolve, reject) => this.#callers.push({ start, end: this.#entries.length, resolve, reject }));
  }

  #flush() {
    const entries = this.#entries;
    const callers = this.#callers;
    this.#entries = [];
    this.#callers = [];
    this.#scheduled = false;
    const size = this.#size;
    const runs = [];
    for (let i = 0; i < entries.length; i += size) runs.push(this.#send(entries.slice(i, i + size)));
    for (const c of callers) {
      const first = Math.floor(c.start / size);
      const last = Math.floor((c.end - 1) / size);
      Promise.all(runs.slice(first, last + 1)).then((results) => {
        const all = results.length === 1 ? results[0] : results.flat();
        c.resolve(all.slice(c.start - first * size, c.end - first * size));
      }, c.reject);
    }
  }
}
