// The engine contract (cases.mjs) against RedisDelayQueue, as users import it, on a private
// redis-server (tools/redis-server.mjs: a free loopback port, stopped after): one queue,
// or with `shards` one queue over that many hash tags (js/redis/shards.js), whose state is
// every shard's keys together. Consumption is process(handler, { retryDelayMs }) with one
// slot, stopped once n deliveries have settled. Run by redis.test.mjs and redis-shards.test.mjs.
//
// Where RedisDelayQueue does not keep the contract yet, the case is listed below, with why:
// an expected failure must still fail (with an error matching the pattern), so the list can
// only shrink; a case that needs a method Redis lacks is left out, and a test checks the
// method is still missing, so the case comes back once it lands.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { register } from "./register.mjs";
import { shardOf } from "../../js/redis/shards.js";

/**
 * Cases RedisDelayQueue fails today: why, and the error that shows it. None: the list stays,
 * so that a case Redis cannot keep yet is named here (and held to still fail) rather than left out.
 * @type {Record<string, { why: string, error: RegExp }>}
 */
const expectedFailures = {};

/** Cases left out: the method each needs that RedisDelayQueue does not have yet. None. */
/** @type {Record<string, string>} */
const leftOut = {};

/** Values JSON cannot hold, and the path each TypeError must name. */
const unstorable = [
  ["a bigint inside", { a: { b: 1n } }, ".a.b"],
  ["a Date inside", { when: new Date() }, ".when"],
  ["undefined in an array", { list: [1, undefined] }, ".list[1]"],
  ["a function", () => {}, ""],
];

/**
 * An id for `name` that a queue over `k` shards keeps on its first shard, where FIFO among equal
 * deadlines holds (items with equal deadlines on different shards come out in any order:
 * docs/redis.md#one-queue-over-several-shards; tests/redis/shards.test.mjs checks the order
 * across shards).
 */
function onFirstShard(name, k) {
  if (k <= 1) return name;
  for (let i = 0; ; i++) if (shardOf(`${name}~${i}`, k) === 0) return `${name}~${i}`;
}

/** Registers the contract's cases against queues opened with `extra` options (e.g. { shards: 3 }). */
export function runRedis(extra = {}) {
  let server;
  let raw; // a plain client, to read what Redis holds for a queue
  let serial = 0;

  before(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
  });

  after(async () => {
    raw?.disconnect();
    await server?.stop();
  });

  test("the cases left out need methods RedisDelayQueue still lacks", () => {
    for (const [name, method] of Object.entries(leftOut)) {
      assert.equal(typeof RedisDelayQueue.prototype[method], "undefined", `${method} exists now: run "${name}"`);
    }
  });

  /** Runs handler on n deliveries with process(), one at a time, then stops (resolving once their acks and nacks are done). */
  function consume(queue, n, handler, { retryDelayMs = 1000 } = {}) {
    return new Promise((resolve, reject) => {
      const deliveries = [];
      let worker;
      const timer = setTimeout(() => {
        worker?.close();
        reject(new Error(`consume(): ${deliveries.length} of ${n} deliveries in 20 s`));
      }, 20_000);
      worker = queue.process(
        async (value, job) => {
          deliveries.push({
            id: job.id,
            value,
            deadline: job.deadline,
            attempt: job.attempt,
            schedule: job.schedule,
            at: Date.now(),
          });
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

  async function state(queue) {
    const all = { items: {}, pending: [], leased: [], dead: [], reasons: {}, schedules: {} };
    for (const k of queue.keys.shards ?? [queue.keys]) {
      Object.assign(all.items, await raw.hgetall(k.items));
      all.pending.push(...(await raw.zrange(k.pending, 0, -1, "WITHSCORES")));
      all.leased.push(...(await raw.zrange(k.leased, 0, -1, "WITHSCORES")));
      all.dead.push(...(await raw.zrange(k.dead, 0, -1, "WITHSCORES")));
      Object.assign(all.reasons, await raw.hgetall(k.reasons));
      Object.assign(all.schedules, await raw.hgetall(k.schedules));
    }
    return all;
  }

  register(
    async (c) => {
      const queues = [];
      const engine = {
        name: extra.shards ? `RedisDelayQueue (shards: ${extra.shards})` : "RedisDelayQueue",
        open: async (opts) => {
          const q = new RedisDelayQueue({ redis: server.url, name: `contract-${++serial}`, ...extra, ...opts });
          queues.push(q);
          return q;
        },
        consume,
        state,
        unstorable,
        tied: (name) => onFirstShard(name, extra.shards ?? 1),
      };
      return {
        run: () => c.run(engine),
        dispose: () => Promise.all(queues.map((q) => q.close())),
      };
    },
    { expectedFailures, leftOut },
  );
}
