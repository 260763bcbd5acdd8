// Metrics through OpenTelemetry (js/engine/metrics.js), read by the SDK's own reader from the
// MeterProvider an application registers: DurableDelayQueue here, on the fake storage;
// RedisDelayQueue's in tests/redis/inspect.test.mjs. And a run where @opentelemetry/api
// cannot be loaded at all.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { metrics } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { DurableDelayQueue, FakeStorage } from "./durable-helpers.mjs";

/** A reader that collects when asked: what a Prometheus scrape or an exporter's tick does. */
class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  async onForceFlush() {}
  async onShutdown() {}
}

/** name → [{ attributes, value }] of what the reader collects now. */
async function collect(reader) {
  const { resourceMetrics, errors } = await reader.collect();
  assert.deepEqual(errors, []);
  const out = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      out[m.descriptor.name] = m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }));
      out[m.descriptor.name].unit = m.descriptor.unit;
    }
  }
  return out;
}

/** Registers a fresh provider with one reader for the test; unregistered after. */
function provider(t) {
  const reader = new Reader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.disable();
  assert.ok(metrics.setGlobalMeterProvider(meterProvider));
  t.after(async () => {
    metrics.disable();
    await meterProvider.shutdown();
  });
  return reader;
}

/** One of each outcome: "ok" acked, "flaky" nacked then acked, "bad" nacked then dead (maxAttempts 2). */
async function run(queue) {
  await queue.offer("ok", 0, { id: "ok" });
  await queue.offer("flaky", 0, { id: "flaky" });
  await queue.offer("bad", 0, { id: "bad" });
  await queue.offer("later", 3_600_000, { id: "later" });
  const failed = new Set();
  const handler = (value) => {
    if (value === "bad" || (value === "flaky" && !failed.has(value))) {
      failed.add(value);
      throw new Error(`no: ${value}`);
    }
  };
  for (let i = 0; i < 20 && (await queue.stats()).delivered < 5; i++) {
    await queue.deliver(handler, { retryDelayMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test("the SDK's reader sees the lateness histogram, the counters and the gauges, per queue name", async (t) => {
  const reader = provider(t);
  const queue = await DurableDelayQueue.open(new FakeStorage(), { name: "orders", maxAttempts: 2 });
  await run(queue);
  const got = await collect(reader);
  const attributes = { "tarry.queue.name": "orders", "tarry.queue.engine": "durable" };
  const one = (name) => {
    assert.ok(got[name], `${name} collected (got ${Object.keys(got)})`);
    assert.equal(got[name].length, 1, name);
    assert.deepEqual(got[name][0].attributes, attributes, name);
    return got[name][0].value;
  };
  const lateness = one("tarry.queue.lateness");
  assert.equal(got["tarry.queue.lateness"].unit, "ms");
  assert.equal(lateness.count, 5, "one lateness per delivery");
  assert.ok(lateness.min >= 0 && lateness.max < 60_000, JSON.stringify(lateness));
  assert.equal(one("tarry.queue.delivered"), 5);
  assert.equal(one("tarry.queue.acked"), 2);
  assert.equal(one("tarry.queue.nacked"), 2);
  assert.equal(one("tarry.queue.dead"), 1);
  assert.equal(one("tarry.queue.pending"), 1);
  assert.equal(one("tarry.queue.in_flight"), 0);
  assert.equal(one("tarry.queue.dead_letters"), 1);
  await queue.close();
});

test("a provider registered after the queue opened is used from the next event on", async (t) => {
  metrics.disable();
  const queue = await DurableDelayQueue.open(new FakeStorage(), { name: "late" });
  await queue.offer("before", 0);
  await queue.deliver(() => {});
  const reader = provider(t);
  await queue.offer("after", 0);
  await queue.deliver(() => {});
  const got = await collect(reader);
  assert.equal(got["tarry.queue.delivered"][0].value, 1, "the delivery made before registration is not counted");
  assert.equal(got["tarry.queue.pending"][0].value, 0);
  await queue.close();
});

test("without a registered provider nothing is recorded and nothing breaks", async () => {
  metrics.disable();
  const queue = await DurableDelayQueue.open(new FakeStorage(), { maxAttempts: 2 });
  await run(queue);
  assert.equal((await queue.stats()).delivered, 5);
  await queue.close();
});

test("with @opentelemetry/api impossible to load, every entry loads and a queue works", () => {
  // A resolve hook refuses every @opentelemetry module, as if the package were not installed.
  const hook = `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if (specifier.startsWith("@opentelemetry/")) throw new Error("absent: " + specifier);
      return next(specifier, context);
    }`)}`;
  const script = `
    import { register } from "node:module";
    register(${JSON.stringify(hook)});
    await assertAbsent();
    const { DelayQueue } = await import("tarry-queue");
    await import("tarry-queue/redis");
    await import("${new URL("../../js/node.js", import.meta.url)}");
    const { DurableDelayQueue } = await import("${new URL("../../js/durable/queue.js", import.meta.url)}");
    const { FakeStorage } = await import("${new URL("../../tools/durable-storage.mjs", import.meta.url)}");
    const q = await DurableDelayQueue.open(new FakeStorage());
    await q.offer("x", 0);
    let seen = 0;
    q.on("delivered", () => seen++);
    console.log(await q.deliver(() => {}), seen, new DelayQueue().size);
    async function assertAbsent() {
      try { await import("@opentelemetry/api"); } catch { return; }
      throw new Error("the hook did not hide @opentelemetry/api");
    }`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(out.trim(), "1 1 0");
});
