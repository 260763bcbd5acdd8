// The runs bench/redis/run.mjs and bench/calls/run.mjs make on one private Redis: a task of
// bench/redis/child.mjs in a fresh process, a delivery run (worker processes, then a producer),
// a kill -9 recovery run, a run of bench/redis/queues.mjs, and what the server spent meanwhile.
//
// `roots` names implementations that are tarry built from another tree: { before: dir } runs
// impl "before" as "tarry", with `tarry-queue` imported from dir (bench/calls/root.mjs), in
// that process and every process it starts.

import { execFileSync, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { rootEnv } from "../calls/root.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const N = 10_000; // items of a spread delivery run
export const BURST = 20_000; // items due at one instant in a burst run
export const CONCURRENCY = 8; // per worker process, both libraries
export const QUEUES = 10_000; // queues in one process (bench/redis/queues.mjs)
export const QUEUES_SPREAD = 10_000; // ms over which their items come due in the spread run

/** Waits until `test()` holds, for at most `ms`: whether it did. */
export async function until(test, ms) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}

/**
 * The runs on `redis` (tools/redis-server.mjs), `log` for the queues runs' lines, and
 * `roots` as above.
 */
export function runner(redis, { log = () => {}, roots = {} } = {}) {
  let serial = 0;
  /** The library a process runs for `impl`, and its environment. */
  const implOf = (impl) => (roots[impl] ? "tarry" : impl);
  const envOf = (impl) => (roots[impl] ? rootEnv(roots[impl]) : process.env);
  const name = (prefix) => `${prefix}${++serial}`;

  /** A child process running one task; `result` resolves with what it sends back. */
  function child(task, impl, extra = {}, file = "./child.mjs") {
    const cfg = { task, impl: implOf(impl), port: redis.port, name: name("b"), ...extra };
    const c = fork(here(file), [JSON.stringify(cfg)], {
      env: envOf(impl),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const h = { c, count: 0 };
    h.ready = new Promise((r) => c.on("message", (m) => m.type === "ready" && r()));
    h.holding = new Promise((r) => c.on("message", (m) => m.type === "holding" && r()));
    c.on("message", (m) => m.type === "count" && (h.count = m.n));
    h.result = new Promise((resolve, reject) => {
      c.on("message", (m) => m.type === "result" && resolve(m.result));
      c.once("exit", (code, signal) => reject(new Error(`${task} ${impl} exited (${code ?? signal})`)));
    });
    h.result.catch(() => {});
    return h;
  }

  /**
   * One run of bench/redis/queues.mjs or queues-bullmq.mjs (its own redis-server, its own
   * processes), the items due together or, with `spread`, over QUEUES_SPREAD ms: its JSON line.
   */
  function queuesRun(impl = "tarry", spread = false) {
    const file = implOf(impl) === "tarry" ? "./queues.mjs" : "./queues-bullmq.mjs";
    const out = execFileSync(
      process.execPath,
      [here(file), "--spread", String(spread ? QUEUES_SPREAD : 0), String(QUEUES)],
      {
        encoding: "utf8",
        env: envOf(impl),
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const sample = JSON.parse(out.trim().split("\n").pop());
    log(
      `${QUEUES} queues ${impl}${spread ? `, due over ${QUEUES_SPREAD} ms` : ""}: ${sample.connections} connections, open ${sample.openMs} ms, lateness p50 ${sample.latenessP50} p99 ${sample.latenessP99} ms`,
    );
    return sample;
  }

  /** CPU time (ms) the Redis server used since the previous call (INFO's used_cpu_* count from its start). */
  let cpuBase = 0;
  async function serverCpu() {
    const info = await redis.cli("info", "cpu");
    const total =
      ["used_cpu_sys", "used_cpu_user"].reduce((s, k) => s + Number(info.match(new RegExp(`${k}:([\\d.]+)`))[1]), 0) *
      1000;
    const used = total - cpuBase;
    cpuBase = total;
    return used;
  }

  /** The calls and the time (µs) Redis spent in commands since the previous call (INFO commandstats, reset each time). */
  async function serverCommands() {
    const info = await redis.cli("info", "commandstats");
    await redis.cli("config", "resetstat");
    let calls = 0;
    let usec = 0;
    const scripts = { calls: 0, usec: 0 };
    for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)) {
      calls += Number(m[2]);
      usec += Number(m[3]);
      if (/^eval|^fcall/.test(m[1])) {
        scripts.calls += Number(m[2]);
        scripts.usec += Number(m[3]);
      }
    }
    return { calls, usec, scripts };
  }

  /** A delivery run: `workers` fresh worker processes, then a producer of N items (BURST in a burst). */
  async function delivery(impl, kind, workers) {
    const n = kind === "burst" ? BURST : N;
    await redis.cli("flushall");
    const queue = name("d");
    const ws = Array.from({ length: workers }, () => child("worker", impl, { name: queue, concurrency: CONCURRENCY }));
    await Promise.all(ws.map((w) => w.ready));
    await serverCpu();
    const shape = kind === "spread" ? { from: 1000, to: 5000 } : { at: 5000 };
    const producer = child("produce", impl, { name: queue, n, ...shape });
    const { offeredIn } = await producer.result;
    await serverCommands(); // from here on (a burst is due 5 s after the start): consuming only
    const complete = await until(() => ws.reduce((n, w) => n + w.count, 0) >= n, 60_000);
    await sleep(300); // a second delivery of anything would show up here
    const redisCpu = await serverCpu();
    const commands = await serverCommands();
    for (const w of ws) w.c.send("report");
    const reports = await Promise.all(ws.map((w) => w.result));
    const got = reports.map((r) => r.got);
    const workerCpu = reports.reduce((ms, r) => ms + r.cpuMs, 0);
    const lateness = [];
    const times = [];
    const seen = new Map();
    for (const g of got)
      for (let i = 0; i < g.length; i += 3) {
        times.push(g[i]);
        lateness.push(g[i + 1]);
        seen.set(g[i + 2], (seen.get(g[i + 2]) ?? 0) + 1);
      }
    lateness.sort((a, b) => a - b);
    const q = (p) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))];
    const sample = {
      offeredIn,
      delivered: seen.size,
      lost: n - seen.size,
      twice: [...seen.values()].filter((n) => n > 1).length,
      early: lateness.filter((x) => x < 0).length,
      p50: q(0.5),
      p99: q(0.99),
      max: lateness[lateness.length - 1],
      complete,
      // CPU per delivery (µs): the worker processes', and Redis' (it also ran the producer's adds).
      workerCpuUs: (workerCpu * 1000) / seen.size,
      redisCpuUs: (redisCpu * 1000) / seen.size,
      // After the producer finished: Redis' time in commands (INFO commandstats) per delivery,
      // and the commands (scripts) per delivery.
      commandUs: commands.usec / seen.size,
      commandsPerItem: commands.calls / seen.size,
      scriptsPerItem: commands.scripts.calls / seen.size,
    };
    if (kind === "burst") {
      // All n were due at one instant: deliveries/s from that instant to the last delivery.
      const due = Math.min(...times.map((t, i) => t - lateness[i]));
      sample.perSec = seen.size / ((Math.max(...times) - due) / 1000);
    }
    return sample;
  }

  /** kill -9 of a worker holding 20 items: ms until another worker has all 20. */
  async function recovery(impl, bullmq, lease) {
    await redis.cli("flushall");
    const queue = name("r");
    const holder = child("hold", impl, { name: queue, n: 20, lease, bullmq });
    await holder.ready;
    await child("produce", impl, { name: queue, n: 20, from: 0, to: 1 }).result;
    await holder.holding;
    const rescuer = child("worker", impl, { name: queue, concurrency: 20, bullmq });
    await rescuer.ready;
    await sleep(1000);
    const killed = performance.timeOrigin + performance.now();
    holder.c.kill("SIGKILL");
    const back = await until(() => rescuer.count >= 20, 120_000);
    rescuer.c.send("report");
    const { got } = await rescuer.result;
    const last = Math.max(...got.filter((_, i) => i % 3 === 0));
    return back ? last - killed : null;
  }

  return { child, serverCpu, serverCommands, delivery, recovery, queuesRun, name };
}
