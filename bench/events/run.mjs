#!/usr/bin/env node
// What events and metrics cost on the hot path: `npm run bench -- --events`.
//
// Each engine's hot path run with nobody listening, with a listener of every event it has,
// and with an OpenTelemetry MeterProvider registered (the SDK, collecting nothing until read),
// the three interleaved over rounds (their order rotating), medians of ns per operation:
//   - DelayQueue: offer + poll of an item already due (the in-memory hot path);
//   - DelayQueue: offer + take() of an item already due;
//   - DurableDelayQueue: deliver() of due items, on the fake storage (tools/durable-storage.mjs);
//   - RedisDelayQueue: take + ack on a private redis-server (round trips dominate), and with
//     another queue observing (observe: true) so that the scripts append to the stream.
// And the guard itself: the check a queue makes before it builds an event, alone.
//
//   node bench/events/run.mjs [--rounds R]     writes bench/events/results.json and results.md
//   node bench/events/run.mjs --render         results.md again from results.json

import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { option, writeResults } from "../cli.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => option(argv, name);
const log = (...a) => process.stderr.write(`[bench:events] ${a.join(" ")}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const MODES = ["none", "listeners", "metrics"];

function render({ meta, rows }) {
  const lines = [
    "# Events and metrics on the hot path",
    "",
    `Written by \`npm run bench -- --events\` (bench/events/run.mjs) on ${meta.date.slice(0, 10)}, commit ${meta.commit}, ${meta.cpu} (${meta.cores} cores, load ${meta.load.toFixed(2)} at the start), Node ${meta.node}, ${meta.rounds} rounds interleaved, medians. "listeners": a listener of every event the engine dispatches; "metrics": an OpenTelemetry MeterProvider registered (the SDK, with a reader that collects nothing meanwhile), no listener.`,
    "",
    "| hot path | nobody listening | listeners | metrics |",
    "| --- | ---: | ---: | ---: |",
  ];
  for (const r of rows) {
    const base = r.none;
    const cell = (v) =>
      v === undefined ? "" : `${fmt(v, r.unit)}${v === base ? "" : ` (${signed(((v - base) / base) * 100)} %)`}`;
    lines.push(`| ${r.name} | ${cell(r.none)} | ${cell(r.listeners)} | ${cell(r.metrics)} |`);
  }
  lines.push(
    "",
    `The check a queue makes before it builds an event (nobody listening, no provider): ${meta.guardNs.toFixed(1)} ns.`,
    "",
  );
  return lines.join("\n");
}

const fmt = (v, unit) => (unit === "ns" ? `${v.toFixed(0)} ns` : `${v.toFixed(0)} µs`);
const signed = (x) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(0)}`;

if (argv.includes("--render")) {
  const saved = JSON.parse(readFileSync(here("./results.json"), "utf8"));
  writeResults(here("./results.md"), here("./results.json"), render(saved), log);
  process.exit(0);
}

const rounds = Number(flag("--rounds") ?? 5);
await import("../../js/node.js");
const { DelayQueue } = await import("tarry-queue");
const { DurableDelayQueue } = await import("../../js/durable/queue.js");
const { FakeStorage } = await import("../../tools/durable-storage.mjs");
const { RedisDelayQueue } = await import("tarry-queue/redis");
const { startRedis } = await import("../../tools/redis-server.mjs");
const { metrics } = await import("@opentelemetry/api");
const { MeterProvider, MetricReader, AggregationTemporality } = await import("@opentelemetry/sdk-metrics");

class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  async onForceFlush() {}
  async onShutdown() {}
}

/** Sets the mode up (listeners on `target`, or a provider) and returns its undo. */
function setUp(mode, target, types) {
  if (mode === "listeners") {
    const fn = () => {};
    for (const t of types) target.addEventListener(t, fn);
    return async () => {
      for (const t of types) target.removeEventListener(t, fn);
    };
  }
  if (mode === "metrics") {
    const provider = new MeterProvider({ readers: [new Reader()] });
    metrics.setGlobalMeterProvider(provider);
    return async () => {
      metrics.disable();
      await provider.shutdown();
    };
  }
  return async () => {};
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

const PATHS = [
  {
    name: "DelayQueue: offer + poll (due)",
    unit: "ns",
    async run(mode) {
      const q = new DelayQueue();
      const undo = setUp(mode, q, ["delivered", "expired"]);
      const n = 200_000;
      for (let i = 0; i < 20_000; i++) {
        q.offer(i, -1);
        q.poll();
      }
      await settle();
      const t = performance.now();
      for (let i = 0; i < n; i++) {
        q.offer(i, -1);
        q.poll();
      }
      const ns = ((performance.now() - t) * 1e6) / n;
      await settle();
      await undo();
      q.close();
      return ns;
    },
  },
  {
    name: "DelayQueue: offer + take() (due)",
    unit: "ns",
    async run(mode) {
      const q = new DelayQueue();
      const undo = setUp(mode, q, ["delivered", "expired"]);
      const n = 50_000;
      for (let i = 0; i < 5000; i++) {
        q.offer(i, -1);
        await q.take();
      }
      const t = performance.now();
      for (let i = 0; i < n; i++) {
        q.offer(i, -1);
        await q.take();
      }
      const ns = ((performance.now() - t) * 1e6) / n;
      await settle();
      await undo();
      q.close();
      return ns;
    },
  },
  {
    name: "DurableDelayQueue: deliver() per item (fake storage)",
    unit: "µs",
    async run(mode) {
      const q = await DurableDelayQueue.open(new FakeStorage());
      const undo = setUp(mode, q, ["delivered", "acked", "nacked", "redelivered", "dead"]);
      const n = 5000;
      await q.offerMany(Array.from({ length: n }, (_, i) => ({ value: i, delayMs: -1 })));
      const t = performance.now();
      const got = await q.deliver(() => {});
      const us = ((performance.now() - t) * 1e3) / got;
      await undo();
      await q.close();
      return us;
    },
  },
];

let redis;
const redisPaths = [
  {
    name: "RedisDelayQueue: take + ack per item (1 process)",
    unit: "µs",
    observe: false,
  },
  {
    name: "RedisDelayQueue: take + ack per item, with a queue observing (observe: true)",
    unit: "µs",
    observe: true,
  },
].map((p) => ({
  ...p,
  async run(mode) {
    const name = `events-${Math.random().toString(36).slice(2)}`;
    const q = new RedisDelayQueue({ redis: redis.url, name });
    const watcher = p.observe ? new RedisDelayQueue({ redis: redis.url, name, observe: true }) : null;
    if (watcher) {
      watcher.addEventListener("delivered", () => {});
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const undo = setUp(mode, q, ["delivered", "acked", "nacked", "redelivered", "dead"]);
    const n = 2000;
    await q.offerMany(Array.from({ length: n }, (_, i) => ({ value: i, delayMs: -1 })));
    const t = performance.now();
    const w = 16;
    let done = 0;
    await Promise.all(
      Array.from({ length: w }, async () => {
        while (done < n) {
          done++;
          const job = await q.take();
          await job.ack();
        }
      }),
    );
    const us = ((performance.now() - t) * 1e3) / n;
    await undo();
    await q.clear();
    await q.close();
    await watcher?.close();
    return us;
  },
}));

redis = await startRedis();
const all = [...PATHS, ...redisPaths];
/** path name → mode → samples */
const samples = Object.fromEntries(all.map((p) => [p.name, Object.fromEntries(MODES.map((m) => [m, []]))]));
const load = os.loadavg()[0];
for (let r = 0; r < rounds; r++) {
  const order = MODES.map((_, i) => MODES[(i + r) % MODES.length]);
  for (const p of all) {
    for (const mode of order) {
      const v = await p.run(mode);
      samples[p.name][mode].push(v);
    }
  }
  log(`round ${r + 1} of ${rounds}`);
}
await redis.stop();

// The guard alone: what a queue asks before building an event, nobody listening.
const { HEARD } = await import("../../js/engine/events.js");
const q = new DelayQueue();
let heard = 0;
const reps = 10_000_000;
const t = performance.now();
for (let i = 0; i < reps; i++) if (q[HEARD]("delivered")) heard++;
const guardNs = ((performance.now() - t) * 1e6) / reps;
q.close();

const rows = all.map((p) => ({
  name: p.name,
  unit: p.unit,
  ...Object.fromEntries(MODES.map((m) => [m, median(samples[p.name][m])])),
}));
const meta = {
  date: new Date().toISOString(),
  commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  load,
  node: process.version,
  rounds,
  guardNs,
  heard,
};
writeFileSync(here("./results.json"), `${JSON.stringify({ meta, rows, samples }, null, 2)}\n`);
writeResults(here("./results.md"), here("./results.json"), render({ meta, rows }), log);
process.stdout.write(render({ meta, rows }));
