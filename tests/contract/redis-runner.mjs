// The engine contract (cases.mjs) against RedisDelayQueue, as users import it, on a private
// redis-server (tools/redis-server.mjs: a free loopback port, stopped after): one queue,
// or with `shards` one queue over that many hash tags (js/redis/shards.js), whose state is
// every shard's keys together; run by server-engine.mjs (consumed by process()). Run by
// redis.test.mjs and redis-shards.test.mjs.
//
// Where RedisDelayQueue does not keep the contract yet, the case is listed below, with why
// (server-engine.mjs holds both lists to their word).
import { after, before } from "node:test";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { runServerEngine } from "./server-engine.mjs";
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

  before(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
  });

  after(async () => {
    raw?.disconnect();
    await server?.stop();
  });

  /** Every key of the queue (of each shard), together. */
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

  runServerEngine({
    name: extra.shards ? `RedisDelayQueue (shards: ${extra.shards})` : "RedisDelayQueue",
    Queue: RedisDelayQueue,
    open: (name, opts) => new RedisDelayQueue({ redis: server.url, name, ...extra, ...opts }),
    state,
    tied: (name) => onFirstShard(name, extra.shards ?? 1),
    expectedFailures,
    leftOut,
  });
}
