// The engine contract (cases.mjs) against RedisDelayQueue, as users import it, on a private
// redis-server (tests/redis/redis-server.mjs: a free loopback port, stopped after). Consumption is
// process(handler, { retryDelayMs }) with one slot, stopped once n deliveries have settled.
//
// Where RedisDelayQueue does not keep the contract yet, the case is listed below, with why:
// an expected failure must still fail (with an error matching the pattern), so the list can
// only shrink; a case that needs a method Redis lacks is left out, and a test checks the
// method is still missing, so the case comes back once it lands.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../redis/redis-server.mjs";
import { register } from "./register.mjs";

/** Cases RedisDelayQueue fails today: why, and the error that shows it. */
const expectedFailures = {
  "offerMany is all or nothing: one bad item and none lands": {
    why: 'offerMany() names a bad deadline "deadline", not items[i].deadline (nothing lands, though)',
    error: /"deadline":"soon"/,
  },
  "offerMany: items take effect in order, so a later item's ifExists meets an earlier one": {
    why: "ifExists is ignored (every offer replaces)",
    error: /kept: the first offer of m/,
  },
  'ifExists "keep": the item present stays as it is (throttle)': {
    why: "ifExists is ignored (every offer replaces)",
    error: /the first offer's/,
  },
  'ifExists "extend": a pending item takes the later deadline and the new value (debounce)': {
    why: "ifExists is ignored (every offer replaces)",
    error: /an earlier deadline does not move it/,
  },
  "ifExists on an item in flight: keep leaves it; replace and extend offer a new item, and the running delivery's ack changes nothing":
    {
      why: "ifExists is ignored: keep replaces the item in flight",
      error: /A2/,
    },
  "ifExists on a dead letter: keep leaves it dead; replace and extend put a new pending item in its place": {
    why: "ifExists is ignored: keep replaces the dead letter",
    error: /dead: 0[\s\S]*dead: 1|pending: 3/,
  },
  "retryDelayMs as a function: called with (attempt, error) for each failure that is retried": {
    why: "process() calls retryDelayMs on the last attempt too, though no retry follows",
    error: /failure 3/,
  },
  "deadLetters: { items, next } pages in order of death, each { id, state, value, deadline, attempt, reason, diedAt }":
    {
      why: "deadLetters() resolves to an array, not a page { items, next }, and takes no cursor",
      error: /reading 'map'/,
    },
  "deleteDead: removes a dead letter, true if it was dead; false for what is not": {
    why: "deadLetters() resolves to an array, not a page { items, next }",
    error: /reading 'map'/,
  },
  "bad arguments reject with a TypeError or RangeError that names them (unknown options too), and change nothing": {
    why: 'unknown options and bad ifExists values are not refused; offerMany() names a bad deadline "deadline"; deadLetters() checks neither its options bag, nor limit <= 1000, nor after, and names limit "limit"',
    error: /idd[\s\S]*ifExists[\s\S]*deadline must be a finite time[\s\S]*lmit/,
  },
};

/** Cases left out: the method each needs that RedisDelayQueue does not have yet. */
const leftOut = {
  "purgeDead({ olderThan }): removes the dead letters at least that old, and says how many": "purgeDead",
  "bad arguments to deleteDead and purgeDead reject likewise, and change nothing": "purgeDead",
};

/** Values JSON cannot hold, and the path each TypeError must name. */
const unstorable = [
  ["a bigint inside", { a: { b: 1n } }, ".a.b"],
  ["a Date inside", { when: new Date() }, ".when"],
  ["undefined in an array", { list: [1, undefined] }, ".list[1]"],
  ["a function", () => {}, ""],
];

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
  const k = queue.keys;
  return {
    items: await raw.hgetall(k.items),
    pending: await raw.zrange(k.pending, 0, -1, "WITHSCORES"),
    leased: await raw.zrange(k.leased, 0, -1, "WITHSCORES"),
    dead: await raw.zrange(k.dead, 0, -1, "WITHSCORES"),
    reasons: await raw.hgetall(k.reasons),
    schedules: await raw.hgetall(k.schedules),
  };
}

register(
  async (c) => {
    const queues = [];
    const engine = {
      name: "RedisDelayQueue",
      open: async (opts) => {
        const q = new RedisDelayQueue({ redis: server.url, name: `contract-${++serial}`, ...opts });
        queues.push(q);
        return q;
      },
      consume,
      state,
      unstorable,
    };
    return {
      run: () => c.run(engine),
      dispose: () => Promise.all(queues.map((q) => q.close())),
    };
  },
  { expectedFailures, leftOut },
);
