// One private redis-server per test file: started before its tests and stopped after them,
// with a plain client on it (`raw`, to look at and tamper with the keys) and `open()` for
// queues of names of their own, all closed at the end.

import { after, before } from "node:test";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";

/**
 * Registers the file's before/after hooks; `server` and `raw` are set once `before` has run.
 * @param {string} prefix what the file's queue names start with
 */
export function privateRedis(prefix) {
  let serial = 0;
  const queues = [];
  const fx = {
    /** @type {any} */ server: null,
    /** @type {any} */ raw: null,
    /** A queue name no other queue of the file has. */
    name: () => `${prefix}${++serial}`,
    /** A queue with a name of its own; `errors` collects what onerror reports. */
    open(opts = {}) {
      const errors = [];
      const q = new RedisDelayQueue({ redis: fx.server.url, name: fx.name(), onerror: (e) => errors.push(e), ...opts });
      q.errors = errors;
      queues.push(q);
      return q;
    },
  };
  before(async () => {
    fx.server = await startRedis();
    fx.raw = new Redis(fx.server.url);
  });
  after(async () => {
    await Promise.all(queues.map((q) => q.close()));
    fx.raw.disconnect();
    await fx.server.stop();
  });
  return fx;
}
