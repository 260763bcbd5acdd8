// One measurement of bench/redis/schedules.mjs, in a fresh process. argv[2]: JSON
// { task, impl ("tarry" | "bullmq"), port, name, ... }; the result is sent over IPC.
//
// Tasks:
// - schedule: upserts the schedules `specs` ([{ id, every } | { id, cron, timezone }, with
//   `start`], or `fleet`: { n, every, first, spread }, n every schedules starting at random
//   in [first, first + spread)) one call each, `concurrency` calls at a time; tarry's schedule(), BullMQ's
//   upsertJobScheduler() (every → { every, startDate }, cron → { pattern, tz }).
// - worker: consumes (process() / a BullMQ Worker, cfg.concurrency handlers) until told to
//   report, recording each occurrence's schedule, due time and the lateness of its handler's
//   start: the due time is tarry's job.deadline (the occurrence's instant) and, for BullMQ,
//   the instant its scheduler planned (in the job's id, repeat:<scheduler>:<ms>).

import { Queue, Worker } from "bullmq";
import { RedisDelayQueue } from "tarry-queue/redis";

const cfg = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const connection = { host: "127.0.0.1", port: cfg.port, enableAutoPipelining: true };

const tasks = {
  async schedule() {
    const value = { kind: "tick" };
    let call;
    let close;
    if (cfg.impl === "tarry") {
      const q = new RedisDelayQueue({ redis: connection, name: cfg.name });
      call = (s) =>
        q.schedule(s.id, s.every ? { every: s.every } : { cron: s.cron, timezone: s.timezone }, value, {
          start: s.start,
        });
      close = () => q.close();
    } else {
      const q = new Queue(cfg.name, { connection });
      call = (s) =>
        q.upsertJobScheduler(
          s.id,
          s.every ? { every: s.every, startDate: s.start } : { pattern: s.cron, tz: s.timezone },
          { name: "tick", data: value },
        );
      close = () => q.close();
    }
    const t = now();
    const f = cfg.fleet;
    const specs =
      cfg.specs ??
      Array.from({ length: f.n }, (_, i) => ({
        id: `s${i}`,
        every: f.every,
        start: Math.round(f.first + Math.random() * f.spread),
      }));
    let next = 0;
    const lane = async () => {
      while (next < specs.length) await call(specs[next++]);
    };
    await Promise.all(Array.from({ length: Math.min(cfg.concurrency ?? 1, specs.length) }, lane));
    const ms = now() - t;
    await close();
    return { perSec: specs.length / (ms / 1000) };
  },

  async worker() {
    const got = []; // per occurrence: schedule, due, lateness
    const record = (schedule, due) => {
      got.push(schedule, due, now() - due);
    };
    const progress = setInterval(() => process.send({ type: "count", n: got.length / 3 }), 100);
    let stop;
    if (cfg.impl === "tarry") {
      const q = new RedisDelayQueue({ redis: connection, name: cfg.name, onerror: () => {} });
      const w = q.process(async (_value, job) => record(job.schedule, job.deadline), { concurrency: cfg.concurrency });
      await q.stats();
      stop = async () => {
        await w.close();
        await q.close();
      };
    } else {
      // The instant its scheduler planned is in its id (repeat:<scheduler>:<ms>); its delay is
      // 0 by the time a worker has it.
      const planned = (job) => Number(job.id.slice(job.id.lastIndexOf(":") + 1));
      const w = new Worker(cfg.name, async (job) => record(job.repeatJobKey, planned(job)), {
        connection: { ...connection, maxRetriesPerRequest: null },
        concurrency: cfg.concurrency,
      });
      await w.waitUntilReady();
      stop = () => w.close();
    }
    process.send({ type: "ready" });
    let cpu = process.cpuUsage();
    for (;;) {
      const m = await new Promise((r) => process.once("message", r));
      if (m === "mark") {
        // The measured window starts: CPU and deliveries counted from here.
        cpu = process.cpuUsage();
        got.length = 0;
        continue;
      }
      break; // "report"
    }
    const used = process.cpuUsage(cpu);
    clearInterval(progress);
    await stop();
    return { got, cpuMs: (used.user + used.system) / 1000 };
  },
};

const result = await tasks[cfg.task]();
process.send({ type: "result", result }, () => process.exit(0));
