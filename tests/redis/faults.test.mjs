// Faults, each on its own private redis-server, with worker processes and a producer process:
// a worker killed with leased items, Redis crashing and restarting from its append-only file,
// Redis paused, connections dropped, a handler that always throws. Nothing that an offer()
// resolved may be lost, and nothing may come out early.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { killLeaseHolder } from "../engines/faults.mjs";
import { allDelivered, check, expected, produce, startWorker, until } from "./fleet.mjs";

/** Runs body(redis, workers) with a private server; kills what is left afterwards. */
async function withRedis(opts, body) {
  const redis = await startRedis(opts);
  const workers = [];
  try {
    await body(redis, workers);
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
    await redis.stop();
  }
}

const say = (...a) => console.log(`# ${a.join(" ")}`);

test("kill -9 of a worker holding leased items: the others get them within visibilityTimeout + 1 s", async () => {
  await withRedis({}, async (redis, workers) => {
    const queue = new RedisDelayQueue({ redis: redis.url, name: "jobs" });
    try {
      const base = { url: redis.url, names: ["jobs"], visibilityTimeout: 1500 };
      await killLeaseHolder({ startWorker, base, queue, workers, comeBackMs: 10_000, settleMs: 200 });
    } finally {
      await queue.close();
    }
  });
});

/** The run shared by the outage tests: 2 workers, a producer pacing 3000 items over 2 s. */
async function outage(redis, workers, { fault, at, vis = 1000 }) {
  const base = { url: redis.url, names: ["orders"], visibilityTimeout: vis, concurrency: 8 };
  workers.push(startWorker({ ...base, mode: "process" }), startWorker({ ...base, mode: "take" }));
  await Promise.all(workers.map((w) => w.ready));
  const producing = produce({ ...base, count: 3000, minDelay: 200, maxDelay: 1500, paceMs: 2000 });
  await sleep(at);
  const t = Date.now();
  await fault();
  const produced = await producing;
  const want = expected(produced);
  await until(() => allDelivered(want, workers), 30_000, "every item whose offer resolved to be delivered");
  const recovered = Date.now() - t;
  await sleep(300);
  await Promise.all(workers.map((w) => w.stop()));
  const figures = check(produced, workers, { exactlyOnce: false });
  const deliveries = workers.reduce((n, w) => n + w.got.length, 0);
  return { ...figures, offered: want.size, failed: produced.failed, again: deliveries - figures.delivered, recovered };
}

test("Redis crashes (kill -9) and restarts from its append-only file (appendfsync always): nothing resolved is lost", async () => {
  await withRedis({ aof: true }, async (redis, workers) => {
    const r = await outage(redis, workers, {
      at: 800,
      fault: async () => {
        await redis.kill("SIGKILL");
        await sleep(300);
        await redis.start();
      },
    });
    say(
      `Redis restart: ${r.offered} offers resolved (${r.failed} batches rejected), all delivered; ${r.again} delivered again;`,
      `lateness p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms; all delivered ${r.recovered} ms after the crash`,
    );
  });
});

test("Redis paused (SIGSTOP) for 2 s: the workers recover by themselves, nothing lost", async () => {
  await withRedis({}, async (redis, workers) => {
    const r = await outage(redis, workers, {
      at: 500,
      vis: 5000,
      fault: async () => {
        await redis.kill("SIGSTOP");
        await sleep(2000);
        await redis.kill("SIGCONT");
      },
    });
    say(
      `SIGSTOP 2 s: ${r.offered} offered, all delivered; ${r.again} delivered again;`,
      `lateness p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms`,
    );
    assert.equal(r.failed, 0, "an offer failed during the pause");
  });
});

test("connections dropped (CLIENT KILL of every client and subscriber): they reconnect and go on", async () => {
  await withRedis({}, async (redis, workers) => {
    const r = await outage(redis, workers, {
      at: 700,
      fault: async () => {
        // The producer is a process of its own: on a loaded machine it may connect after `at`.
        const clients = async () => (await redis.cli("client", "list", "type", "normal")).split("\n").length - 1; // not redis-cli
        for (const end = Date.now() + 10_000; (await clients()) < 3 && Date.now() < end; ) await sleep(50);
        const normal = await redis.cli("client", "kill", "type", "normal", "skipme", "yes");
        const pubsub = await redis.cli("client", "kill", "type", "pubsub");
        say(`killed ${normal} connections and ${pubsub} subscriber connections`);
        assert.ok(Number(normal) >= 3 && Number(pubsub) >= 2, "the workers' connections were not all there");
      },
    });
    say(
      `dropped connections: ${r.offered} offered (${r.failed} batches rejected), all delivered; ${r.again} delivered again;`,
      `lateness p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms`,
    );
  });
});

test("a handler that always throws: the item ends in the dead letters after maxAttempts; others still flow", async () => {
  await withRedis({}, async (redis, workers) => {
    const failing = startWorker({ url: redis.url, names: ["bad"], mode: "throw", concurrency: 4, maxAttempts: 3 });
    const fine = startWorker({ url: redis.url, names: ["good"], mode: "process", concurrency: 4 });
    workers.push(failing, fine);
    await Promise.all(workers.map((w) => w.ready));
    const bad = new RedisDelayQueue({ redis: redis.url, name: "bad", onerror: () => {} });
    const good = new RedisDelayQueue({ redis: redis.url, name: "good", onerror: () => {} });
    try {
      await bad.offerMany(Array.from({ length: 5 }, (_, n) => ({ id: `b${n}`, value: { n }, delayMs: 10 * n })));
      await good.offerMany(Array.from({ length: 5 }, (_, n) => ({ id: `g${n}`, value: { n }, delayMs: 10 * n })));
      await until(() => fine.got.length === 5, 10_000, "the good items");
      let dead = [];
      for (let i = 0; i < 200 && dead.length < 5; i++) {
        dead = (await bad.deadLetters()).items;
        await sleep(25);
      }
      assert.deepEqual(dead.map((d) => d.id).sort(), ["b0", "b1", "b2", "b3", "b4"]);
      for (const d of dead) {
        assert.equal(d.attempt, 3);
        assert.match(d.reason, /this handler always fails/);
      }
      // The worker reports its deliveries every 50 ms: wait for them, and a little more for any extra.
      await until(() => failing.got.length >= 15, 5000, "the reports of 15 deliveries");
      await sleep(300);
      assert.equal(failing.got.length, 15, "each bad item was tried exactly maxAttempts times");
      say(`always-throwing handler: 5 items tried 3 times each, then dead-lettered with the error's text`);
    } finally {
      await Promise.all([bad.close(), good.close()]);
    }
  });
});
