// One measurement of bench/redis/run.mjs, in a fresh process. argv[2]: JSON
// { task, impl ("tarry" | "bullmq"), port, name, ... }; the result is sent over IPC.
//
// Tasks: ping, add-serial, add-concurrent, add-bulk (adds/s); worker (consumes, reports each
// delivery's lateness), produce (offers the items a delivery run expects), hold (a worker whose
// handlers never return, to be killed), fill (Redis bytes per pending item).

import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";

const cfg = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
// Both libraries get the same client settings: ioredis, auto-pipelining on.
const connection = { host: "127.0.0.1", port: cfg.port, enableAutoPipelining: true };
const FAR = 3_600_000; // adds are due in an hour: nothing is delivered while adding

/** The library's add calls, and `client()`: the ioredis connection they go over. */
function adder() {
  if (cfg.impl === "tarry") {
    const client = new Redis(connection);
    // cfg.wait: each offer resolves once a replica has it (the bench's primary has one then).
    const waitForReplicas = cfg.wait ? { count: 1, timeout: 1000 } : undefined;
    const q = new RedisDelayQueue({ redis: client, name: cfg.name, waitForReplicas });
    return {
      one: (value, delayMs) => q.offer(value, delayMs),
      many: (values, delayMs) => q.offerMany(values.map((value) => ({ value, delayMs }))),
      client: async () => client,
      close: async () => {
        await q.close();
        client.disconnect();
      },
    };
  }
  const q = new Queue(cfg.name, { connection });
  return {
    one: (value, delay) => q.add("job", value, { delay }),
    many: (values, delay) => q.addBulk(values.map((data) => ({ name: "job", data, opts: { delay } }))),
    client: () => q.client ?? q.backend.client,
    close: () => q.close(),
  };
}

const tasks = {
  async ping() {
    const r = new Redis(connection);
    for (let i = 0; i < 500; i++) await r.ping();
    const t = now();
    for (let i = 0; i < cfg.n; i++) await r.ping();
    const ms = now() - t;
    r.disconnect();
    return { perSec: cfg.n / (ms / 1000) };
  },

  /**
   * Adds awaited one at a time, and PINGs awaited one at a time on the same connection, in
   * alternating blocks of 100, so that both see the same machine.
   */
  async "add-serial"() {
    const a = adder();
    const client = await a.client();
    for (let i = 0; i < 300; i++) await a.one({ n: i }, FAR); // warm-up: connect, load scripts, JIT
    for (let i = 0; i < 300; i++) await client.ping();
    let addMs = 0;
    let pingMs = 0;
    for (let done = 0; done < cfg.n; done += 100) {
      let t = now();
      for (let i = 0; i < 100; i++) await a.one({ n: done + i }, FAR);
      addMs += now() - t;
      t = now();
      for (let i = 0; i < 100; i++) await client.ping();
      pingMs += now() - t;
    }
    await a.close();
    return { perSec: cfg.n / (addMs / 1000), pingPerSec: cfg.n / (pingMs / 1000) };
  },

  async "add-concurrent"() {
    const a = adder();
    await Promise.all(Array.from({ length: 300 }, (_, i) => a.one({ n: i }, FAR)));
    const t = now();
    await Promise.all(Array.from({ length: cfg.n }, (_, i) => a.one({ n: i }, FAR)));
    const ms = now() - t;
    await a.close();
    return { perSec: cfg.n / (ms / 1000) };
  },

  async "add-bulk"() {
    const a = adder();
    const batch = (k) => Array.from({ length: 500 }, (_, i) => ({ n: k * 500 + i }));
    await a.many(batch(0), FAR);
    const t = now();
    for (let k = 0; k < cfg.n / 500; k++) await a.many(batch(k), FAR);
    const ms = now() - t;
    await a.close();
    return { perSec: cfg.n / (ms / 1000) };
  },

  /** Offers cfg.n items in calls of 500: due spread over [from, to) ms after their call, or all at `at` ms after the start. */
  async produce() {
    let many;
    let q;
    if (cfg.impl === "tarry") {
      q = new RedisDelayQueue({ redis: connection, name: cfg.name });
      many = (values, delays) => q.offerMany(values.map((value, i) => ({ value, delayMs: delays[i] })));
    } else {
      q = new Queue(cfg.name, { connection });
      many = (values, delays) =>
        q.addBulk(values.map((data, i) => ({ name: "job", data, opts: { delay: delays[i] } })));
    }
    await many([{ warm: true, due: now() + FAR }], [FAR]);
    const start = now();
    for (let k = 0; k * 500 < cfg.n; k++) {
      const at = now();
      const values = [];
      const delays = [];
      for (let i = 0; i < Math.min(500, cfg.n - k * 500); i++) {
        const delay = Math.ceil(cfg.at ? start + cfg.at - at : cfg.from + Math.random() * (cfg.to - cfg.from));
        values.push({ n: k * 500 + i, due: at + delay });
        delays.push(delay);
      }
      await many(values, delays);
    }
    const offeredIn = now() - start;
    await q.close();
    return { offeredIn };
  },

  /**
   * Redis bytes per pending item: cfg.n items due in an hour, each a JSON value of exactly
   * cfg.bytes bytes, added in calls of 500; used_memory after minus before (INFO memory, on
   * an emptied server), over cfg.n, and MEMORY USAGE of each key the library made.
   */
  async fill() {
    const a = adder();
    const client = await a.client();
    const value = (n) => {
      const v = { n, pad: "" };
      v.pad = "x".repeat(cfg.bytes - JSON.stringify(v).length);
      return v;
    };
    const used = async () => Number((await client.info("memory")).match(/used_memory:(\d+)/)[1]);
    await client.ping();
    const before = await used();
    for (let k = 0; k * 500 < cfg.n; k++)
      await a.many(
        Array.from({ length: Math.min(500, cfg.n - k * 500) }, (_, i) => value(k * 500 + i)),
        FAR,
      );
    const after = await used();
    const keys = {};
    for (const key of await client.keys("*")) {
      const bytes = await client.memory("USAGE", key, "SAMPLES", "0");
      // Per-job keys (BullMQ's bull:<name>:<id>) summed under one pattern.
      const kind = key.replace(/:[0-9a-f-]{1,36}$/, ":<id>");
      keys[kind] = (keys[kind] ?? 0) + bytes;
    }
    await a.close();
    return { bytesPerItem: (after - before) / cfg.n, keys };
  },

  /** Consumes until cfg.n items came out; each delivery's lateness against its call + delay. */
  async worker() {
    const got = []; // per delivery: time, lateness, id
    const deliver = (value, id) => {
      const t = now();
      got.push(t, t - value.due, id);
    };
    const progress = setInterval(() => process.send({ type: "count", n: got.length / 3 }), 100);
    let stop;
    let wakes;
    if (cfg.impl === "tarry") {
      const q = new RedisDelayQueue({ redis: connection, name: cfg.name, onerror: () => {} });
      const w = q.process(async (value, job) => deliver(value, job.id), { concurrency: cfg.concurrency });
      await q.stats();
      stop = async () => {
        wakes = (await q.stats()).wakes;
        await w.close();
        await q.close();
      };
    } else {
      const w = new Worker(cfg.name, async (job) => deliver(job.data, job.id), {
        connection: { ...connection, maxRetriesPerRequest: null },
        concurrency: cfg.concurrency,
        ...cfg.bullmq,
      });
      await w.waitUntilReady();
      stop = () => w.close();
    }
    process.send({ type: "ready" });
    const cpu = process.cpuUsage();
    await new Promise((r) => process.once("message", r)); // "report"
    const used = process.cpuUsage(cpu);
    clearInterval(progress);
    await stop();
    return { got, cpuMs: (used.user + used.system) / 1000, wakes };
  },

  /** A worker whose handlers never return: it holds cfg.n items until it is killed. */
  async hold() {
    let held = 0;
    const never = () => {
      if (++held === cfg.n) process.send({ type: "holding" });
      return new Promise(() => {});
    };
    if (cfg.impl === "tarry") {
      const q = new RedisDelayQueue({
        redis: connection,
        name: cfg.name,
        visibilityTimeout: cfg.lease,
        onerror: () => {},
      });
      q.process(never, { concurrency: cfg.n });
      await q.stats();
    } else {
      const w = new Worker(cfg.name, never, {
        connection: { ...connection, maxRetriesPerRequest: null },
        concurrency: cfg.n,
        ...cfg.bullmq,
      });
      await w.waitUntilReady();
    }
    process.send({ type: "ready" });
    return new Promise(() => {});
  },
};

const run = tasks[cfg.task];
const result = await run();
process.send({ type: "result", result }, () => process.exit(0));
