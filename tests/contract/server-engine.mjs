// The contract's runner for an engine on a server (RedisDelayQueue, PostgresDelayQueue, and
// the next): every case of cases.mjs against queues the engine's runner opens, consumed by
// process(handler, { retryDelayMs }) with one slot and stopped once n deliveries have settled.
// A runner gives how to open a queue and read what the server holds for it; the server's
// start and stop are its own (before/after).
//
// Its lists hold the engine to its word (register.mjs): an expected failure must still fail
// (with an error matching the pattern), so the list can only shrink; a case left out needs a
// method the engine's class lacks, and a test checks that the method is still missing, so the
// case comes back once it lands.
import { test } from "node:test";
import assert from "node:assert/strict";
import { delivery } from "./cases.mjs";
import { register } from "./register.mjs";

/** Values JSON cannot hold, and the path each TypeError must name (every engine that stores JSON). */
export const unstorableJson = [
  ["a bigint inside", { a: { b: 1n } }, ".a.b"],
  ["a Date inside", { when: new Date() }, ".when"],
  ["undefined in an array", { list: [1, undefined] }, ".list[1]"],
  ["a function", () => {}, ""],
];

/** How long consume() waits for its n deliveries before the case fails. */
const LIMIT_MS = 20_000;

/** Runs handler on n deliveries with process(), one at a time, then stops (resolving once their acks and nacks are done). */
export function consume(queue, n, handler, { retryDelayMs = 1000 } = {}) {
  return new Promise((resolve, reject) => {
    const deliveries = [];
    let worker;
    const timer = setTimeout(() => {
      worker?.close();
      reject(new Error(`consume(): ${deliveries.length} of ${n} deliveries in ${LIMIT_MS / 1000} s`));
    }, LIMIT_MS);
    worker = queue.process(
      async (value, job) => {
        deliveries.push(delivery(value, job));
        try {
          return await handler(value, job);
        } finally {
          if (deliveries.length === n) {
            // close() waits for this handler's ack or nack: not awaited here.
            worker.close().then(() => {
              clearTimeout(timer);
              resolve(deliveries);
            }, reject);
          }
        }
      },
      { retryDelayMs },
    );
  });
}

/**
 * Registers the contract's tests for one engine on a server.
 * @param {object} engine
 * @param {string} engine.name the engine's name in the cases' messages
 * @param {Function} engine.Queue its class, whose prototype the left-out cases' methods are looked for on
 * @param {(name: string, opts: object) => any} engine.open a queue of `name` (unique in the run) for one case
 * @param {(queue: any) => Promise<unknown>} engine.state everything the server holds for the queue
 * @param {(name: string) => string} [engine.tied] cases.mjs's tied(); the name itself by default
 * @param {Array<[string, unknown, string]>} [engine.unstorable] unstorableJson by default
 * @param {Record<string, { why: string, error: RegExp }>} [engine.expectedFailures]
 * @param {Record<string, string>} [engine.leftOut] case name → the method it needs
 */
export function runServerEngine({
  name,
  Queue,
  open,
  state,
  tied = (id) => id,
  unstorable = unstorableJson,
  expectedFailures = {},
  leftOut = {},
}) {
  let serial = 0;
  test(`the cases left out need methods ${Queue.name} still lacks`, () => {
    for (const [c, method] of Object.entries(leftOut)) {
      assert.equal(typeof Queue.prototype[method], "undefined", `${method} exists now: run "${c}"`);
    }
  });
  register(
    async (c) => {
      const queues = [];
      const engine = {
        name,
        open: async (opts) => {
          const q = open(`contract-${++serial}`, opts);
          queues.push(q);
          return q;
        },
        consume,
        state,
        unstorable,
        tied,
      };
      return {
        run: () => c.run(engine),
        dispose: () => Promise.all(queues.map((q) => q.close())),
      };
    },
    { expectedFailures, leftOut },
  );
}
