// tarry-queue/redis's consuming side against a real Redis, where processes race: a head heard
// while an older take reply is on its way, a monotonic clock that stood still, a Redis that
// restarted without its data, a handler that extended its own lease, a queue closed while its
// worker's handlers run, and a line of takes that time out while another waits.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { SCRIPTS } from "../../js/redis/scripts.js";
import { privateRedis } from "./fixture.mjs";
import { startRedis } from "../../tools/redis-server.mjs";

const fx = privateRedis("k");
const open = fx.open;

/** A second handle on the same queue, as another process would have. */
function twin(q, opts = {}) {
  return open({ name: q.keys.items.match(/\{(.*)\}/)[1], ...opts });
}

/** Resolves with `p`'s value, or with `"late"` after `ms`. */
const within = (p, ms) => Promise.race([p, sleep(ms).then(() => "late")]);

/** The server's time now, epoch ms. */
async function serverNow() {
  const [s, us] = await fx.raw.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

test("a head heard while an older take reply is on its way is not lost to that reply", async () => {
  // The consumer's client hands its take replies over 300 ms late, as a busy event loop or a
  // slow link would: the producer's offer (and its message) comes after the take script ran
  // and before its reply arrives.
  const client = new Redis(fx.server.url, { enableAutoPipelining: true });
  const takes = { running: 0 };
  for (const method of ["eval", "evalsha"]) {
    const send = client[method].bind(client);
    client[method] = async (...args) => {
      const take = args[0] === SCRIPTS.take.sha || args[0] === SCRIPTS.take.source;
      if (take) takes.running++;
      try {
        const reply = await send(...args);
        if (take) await sleep(300);
        return reply;
      } finally {
        if (take) takes.running--;
      }
    };
  }
  try {
    const consumer = open({ redis: client, safetyInterval: 60_000 });
    const producer = twin(consumer);
    await producer.offer("far", 60_000, { id: "far" });
    const taken = consumer.take();
    for (const until = Date.now() + 5000; takes.running === 0; await sleep(5))
      assert.ok(Date.now() < until, "no take script was seen on the consumer's client");
    await sleep(50); // the take script has run; its reply is held
    await producer.offer("near", 0, { id: "near" });
    const job = await within(taken, 3000);
    assert.notEqual(job, "late", "the near item waited: the older take reply hid its message");
    assert.equal(job.value, "near");
    await job.ack();
    await consumer.close();
  } finally {
    client.disconnect();
  }
});

test("an offer after the monotonic clock stood still (a suspend) is not due early", async () => {
  const q = open();
  await q.offer("warm", 60_000, { id: "warm" }); // replies teach the queue the server's clock
  await q.size();
  const realNow = performance.now;
  const stoppedAt = realNow.call(performance);
  try {
    performance.now = () => stoppedAt; // stands still, as it does while a machine sleeps...
    await sleep(1500);
    const lost = realNow.call(performance) - stoppedAt;
    performance.now = () => realNow.call(performance) - lost; // ...and runs on, 1.5 s behind
    const before = await serverNow();
    await q.offer("x", 2000, { id: "x" });
    const [, deadline] = await fx.raw.zrange(q.keys.pending, 0, -1, "WITHSCORES").then((r) => r.slice(0, 2));
    assert.ok(Number(deadline) >= before + 2000, `due ${before + 2000 - Number(deadline)} ms before call + delay`);
  } finally {
    performance.now = realNow;
  }
});

test("after Redis lost its data (a restart without persistence), a stale delivery's ack removes nothing", async () => {
  const redis = await startRedis();
  try {
    const q = new RedisDelayQueue({ redis: redis.url, name: "lost", onerror: () => {} });
    const other = new RedisDelayQueue({ redis: redis.url, name: "lost", onerror: () => {} });
    await q.offer("first", 0, { id: "x" });
    const stale = await q.take();
    await redis.kill();
    await redis.start(); // empty: the sequence counter starts again
    await other.offer("second", 0, { id: "x" });
    const current = await other.take({ timeout: 5000 });
    assert.equal(current?.value, "second");
    assert.equal(await stale.ack(), false, "the stale delivery's ack removed the current one");
    assert.equal(await stale.nack(), false);
    assert.equal(await stale.extend(), false);
    assert.equal(await current.ack(), true);
    await Promise.all([q.close(), other.close()]);
  } finally {
    await redis.stop();
  }
});

test("process() never shortens a lease its handler extended", async () => {
  const q = open({ visibilityTimeout: 600 });
  await q.offer("long", 0, { id: "L" });
  const seen = await new Promise((resolve, reject) => {
    const worker = q.process(async (_value, job) => {
      try {
        const t = await serverNow();
        assert.equal(await job.extend(5000), true);
        await sleep(1000); // five periodic extensions (every visibilityTimeout / 3) meanwhile
        const lease = Number(await fx.raw.zscore(q.keys.leased, "L"));
        resolve({ lease, wanted: t + 5000 });
      } catch (e) {
        reject(e);
      }
    });
    setTimeout(() => worker.close(), 1500);
  });
  assert.ok(
    seen.lease >= seen.wanted,
    `the lease was cut to ${seen.wanted - seen.lease} ms short of the handler's extension`,
  );
});

test("queue.close() waits for the handlers of a worker whose close() was called first", async () => {
  const q = open();
  const other = twin(q);
  let state = "not started";
  const worker = q.process(async () => {
    state = "running";
    await sleep(300);
    state = "finished";
  });
  await q.offer("x", 0, { id: "x" });
  while (state === "not started") await sleep(5);
  worker.close(); // not awaited
  await q.close();
  assert.equal(state, "finished", "queue.close() resolved while a handler ran");
  assert.deepEqual(q.errors.map(String), [], "the handler's ack failed");
  assert.equal(await other.take({ timeout: 300 }), undefined, "the item came back: it was not acked");
  assert.deepEqual(await fx.raw.hkeys(q.keys.items), []);
});

test("takes that time out while another take waits leave the waiting line (40,000 of them)", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const q = open();
  const worker = q.process(() => {}); // one take waits all along
  await sleep(50);
  gc();
  const before = process.memoryUsage().heapUsed;
  const blocks = [];
  for (let b = 0; b < 40; b++) {
    const t = performance.now();
    await Promise.all(Array.from({ length: 1000 }, () => q.take({ timeout: 0 })));
    blocks.push(performance.now() - t);
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  assert.equal((await q.stats()).takers, 1);
  assert.ok(grown < 4e6, `the heap grew by ${(grown / 1e6).toFixed(1)} MB over 40,000 timed-out takes`);
  const first = (blocks[0] + blocks[1]) / 2;
  const last = (blocks[38] + blocks[39]) / 2;
  assert.ok(
    last < Math.max(10 * first, 200),
    `a block of 1,000 took ${first.toFixed(0)} ms first, ${last.toFixed(0)} ms last`,
  );
  await worker.close();
});
