// One measurement of bench/postgres/run.mjs, in a fresh process. argv[2]: JSON
// { task, impl ("tarry" | "pgboss" | "graphile"), url, name, ... }; the result goes back over IPC.
//
// Tasks: add-serial, add-concurrent, add-bulk (adds/s); produce (the items a delivery run
// expects: all due at one instant, or spread over an interval); stream (items at a steady rate,
// for the churn run); worker (consumes until told to report: each delivery's time and
// lateness); hold (a worker whose handlers never return, to be killed).

import { open } from "./impls.mjs";

const cfg = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const FAR = 3_600_000; // adds are due in an hour: nothing is delivered while adding
const BATCH = 500; // items per bulk call
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const q = await open(cfg.impl, { url: cfg.url, name: cfg.name, lease: cfg.lease, polling: cfg.polling });

const tasks = {
  async "add-serial"() {
    for (let i = 0; i < 100; i++) await q.add({ n: -i }, Date.now() + FAR); // warm-up: connect, plan, JIT
    const t = now();
    for (let i = 0; i < cfg.n; i++) await q.add({ n: i }, Date.now() + FAR);
    return { perSec: cfg.n / ((now() - t) / 1000) };
  },

  async "add-concurrent"() {
    await Promise.all(Array.from({ length: 100 }, (_, i) => q.add({ n: -i }, Date.now() + FAR)));
    const t = now();
    await Promise.all(Array.from({ length: cfg.n }, (_, i) => q.add({ n: i }, Date.now() + FAR)));
    return { perSec: cfg.n / ((now() - t) / 1000) };
  },

  async "add-bulk"() {
    const batch = (k) =>
      Array.from({ length: BATCH }, (_, i) => ({ value: { n: k * BATCH + i }, at: Date.now() + FAR }));
    await q.addMany(batch(-1));
    const t = now();
    for (let k = 0; k * BATCH < cfg.n; k++) await q.addMany(batch(k));
    return { perSec: cfg.n / ((now() - t) / 1000) };
  },

  /**
   * cfg.n items in bulk calls: all due at cfg.at (ms since the epoch), or each due a random
   * cfg.from..cfg.to ms after its call. Each value carries its due time, for the worker.
   */
  async produce() {
    const start = now();
    for (let k = 0; k * BATCH < cfg.n; k++) {
      const items = [];
      for (let i = 0; i < Math.min(BATCH, cfg.n - k * BATCH); i++) {
        const at = Math.ceil(cfg.at ?? now() + cfg.from + Math.random() * (cfg.to - cfg.from));
        items.push({ value: { n: k * BATCH + i, due: at }, at });
      }
      await q.addMany(items);
    }
    return { offeredIn: now() - start, done: now() };
  },

  /** cfg.rate items a second, one add each, each due cfg.delay ms after its call, for cfg.seconds. */
  async stream() {
    const end = now() + cfg.seconds * 1000;
    let n = 0;
    const pending = new Set();
    while (now() < end) {
      const tick = now();
      for (let i = 0; i < cfg.rate / 10; i++) {
        const due = Math.ceil(now() + cfg.delay);
        const p = q.add({ n: n++, due }, due).finally(() => pending.delete(p));
        pending.add(p);
      }
      await sleep(Math.max(0, 100 - (now() - tick)));
    }
    await Promise.all(pending);
    return { offered: n };
  },

  /** Consumes until told to report; per delivery: its time, its lateness, its n. */
  async worker() {
    const got = [];
    const w = await q.work(
      (value) => {
        const t = now();
        got.push(t, t - value.due, value.n);
      },
      { concurrency: cfg.concurrency },
    );
    const progress = setInterval(() => process.send({ type: "count", n: got.length / 3 }), 50);
    process.send({ type: "ready" });
    const cpu = process.cpuUsage();
    await new Promise((r) => process.once("message", r)); // "report"
    const used = process.cpuUsage(cpu);
    clearInterval(progress);
    await w.close();
    return { got, cpuMs: (used.user + used.system) / 1000 };
  },

  /** A worker whose handlers never return: it holds cfg.n items until it is killed. */
  async hold() {
    let held = 0;
    await q.work(
      () => {
        if (++held === cfg.n) process.send({ type: "holding" });
        return new Promise(() => {});
      },
      { concurrency: cfg.n },
    );
    process.send({ type: "ready" });
    return new Promise(() => {});
  },
};

let result;
try {
  result = await tasks[cfg.task]();
} catch (e) {
  // The reason goes to the parent, which keeps it with the failed measurement.
  process.send({ type: "error", message: String(e?.message ?? e) }, () => process.exit(1));
  await new Promise(() => {});
}
await Promise.race([q.close(), sleep(10_000)]);
process.send({ type: "result", result }, () => process.exit(0));
