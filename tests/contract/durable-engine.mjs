// The contract's adapter for DurableDelayQueue (see cases.mjs for what an engine is): a host
// that plays the Durable Object around one queue. Its alarm() calls deliver() every time, as
// an object must, and hands each delivery to the consumer the case is running; a delivery
// that comes before any consumer waits for one (in workerd the alarm may fire between two
// calls of a case). tests/contract/durable.test.mjs runs it on the fake storage under Node
// (with the alarm run as workerd runs it), tests/contract/worker.mjs inside a real Durable
// Object. Nothing Node-only here.

import { delivery } from "./cases.mjs";

/** How long a consumer waits for its deliveries, and a delivery for a consumer, before failing. */
const LIMIT_MS = 20_000;

/** Values structured clone refuses, and the path each TypeError must name. */
export const unstorable = [
  ["a function inside", { a: { f() {} } }, ".a.f"],
  ["a Symbol inside", { list: [1, Symbol("s")] }, ".list[1]"],
  [
    "a getter that throws",
    {
      get boom() {
        throw new Error("getter");
      },
    },
    ".boom",
  ],
  ["a function", () => {}, ""],
];

export class DurableHost {
  #DurableDelayQueue;
  #storage;
  #state;
  queue = null;
  #consumer = null;
  /** Deliveries waiting for a consumer: their resolvers. */
  #waiting = [];
  /** The consumer of the delivery made last (its retryDelayMs applies to that delivery). */
  #last = null;
  #closed = false;
  /** deliver() calls running, and deliveries among them waiting for a consumer. */
  #delivering = 0;
  #idle = 0;

  /**
   * @param {typeof import("../../js/durable/queue.js").DurableDelayQueue} DurableDelayQueue
   * @param {object} storage the object's storage (ctx.storage or a FakeStorage)
   * @param {() => Promise<unknown>} state what storage holds, to compare
   */
  constructor(DurableDelayQueue, storage, state) {
    this.#DurableDelayQueue = DurableDelayQueue;
    this.#storage = storage;
    this.#state = state;
  }

  /** The engine a case is run against. */
  engine(name) {
    return {
      name,
      open: (opts) => this.open(opts),
      consume: (queue, n, handler, opts) => this.consume(queue, n, handler, opts),
      state: async (queue) => ({
        pending: queue.toArray(),
        schedules: await queue.schedules(),
        dead: await queue.deadLetters({ limit: 1000 }),
        stored: await this.#state(),
      }),
      unstorable,
      tied: (name) => name,
    };
  }

  async open(opts) {
    if (this.queue !== null) throw new Error("one DurableDelayQueue per object: open() was called twice in a case");
    this.queue = await this.#DurableDelayQueue.open(this.#storage, opts);
    return this.queue;
  }

  /** The object's alarm(): deliver(), every time. */
  async alarm() {
    if (this.queue === null || this.#closed) return;
    this.#delivering++;
    try {
      await this.queue.deliver((value, job) => this.#dispatch(value, job), {
        retryDelayMs: (attempt, error) => this.#last.retryDelayMs(attempt, error),
      });
    } finally {
      this.#delivering--;
    }
  }

  consume(queue, n, handler, { retryDelayMs = 1000 } = {}) {
    if (queue !== this.queue) throw new Error("consume(): not this object's queue");
    if (this.#consumer !== null) throw new Error("consume(): one consumer at a time");
    return new Promise((resolve, reject) => {
      const consumer = {
        n,
        handler,
        retryDelayMs: (attempt, error) =>
          typeof retryDelayMs === "function" ? retryDelayMs(attempt, error) : retryDelayMs,
        deliveries: [],
        settled: 0,
        done: null,
      };
      const timer = setTimeout(() => {
        if (this.#consumer === consumer) this.#consumer = null;
        reject(new Error(`consume(): ${consumer.deliveries.length} of ${n} deliveries in ${LIMIT_MS} ms`));
      }, LIMIT_MS);
      consumer.done = (error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(consumer.deliveries);
      };
      this.#consumer = consumer;
      for (const wake of this.#waiting.splice(0)) wake();
    });
  }

  async #dispatch(value, job) {
    const consumer = await this.#consumerWithRoom();
    consumer.deliveries.push(delivery(value, job));
    if (consumer.deliveries.length === consumer.n) this.#consumer = null; // full: later deliveries wait
    this.#last = consumer;
    try {
      return await consumer.handler(value, job);
    } finally {
      if (++consumer.settled === consumer.n) this.#quiet().then(() => consumer.done(), consumer.done);
    }
  }

  /**
   * Resolves once the outcome of the last delivery is stored and deliver() has ended (alarm
   * set) or waits for the next consumer: then what the case reads next stays as it is.
   */
  async #quiet() {
    do await new Promise((resolve) => setTimeout(resolve, 1));
    while (this.#delivering > 0 && this.#idle === 0);
    await this.queue.size(); // a read takes its turn after the last outcome's write
  }

  async #consumerWithRoom() {
    const until = Date.now() + LIMIT_MS;
    this.#idle++;
    try {
      while (this.#consumer === null) {
        if (this.#closed) throw new Error("the case has ended: no consumer for this delivery");
        if (Date.now() > until) throw new Error(`a delivery waited ${LIMIT_MS} ms for a consumer`);
        await new Promise((resolve) => {
          this.#waiting.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    } finally {
      this.#idle--;
    }
    return this.#consumer;
  }

  /** After a case: deliveries waiting for a consumer fail (the queue is thrown away), and the queue closes. */
  async close() {
    this.#closed = true;
    for (const wake of this.#waiting.splice(0)) wake();
    await this.queue?.close();
  }
}
