// Seeing into a queue on real Redis: pages through 10^6 pending items (a page at the end costs
// what one at the start does), pause() reaching a consumer in another process at once, the
// events of every process (observe: true) across a kill -9 and a lease expiry, every
// process's figures in stats().all, and the OpenTelemetry metrics. A private redis-server
// (tools/redis-server.mjs).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { metrics } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line) => console.log(`# ${line}`);

let server;
let serial = 0;
const queues = [];
/** A queue on the private server, closed after the tests. */
function open(opts = {}) {
  const q = new RedisDelayQueue({ redis: server.url, name: `inspect-${++serial}`, ...opts });
  queues.push(q);
  return q;
}

before(async () => {
  server = await startRedis();
});

after(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await server?.stop();
});

/** A consumer process (tests/redis/inspect-worker.mjs): its messages arrive in `seen`. */
function consumer(name, mode = "ack", visibilityTimeout = 5000, concurrency = 1) {
  const cfg = { url: server.url, name, mode, visibilityTimeout, concurrency };
  const child = fork(fileURLToPath(new URL("./inspect-worker.mjs", import.meta.url)), [JSON.stringify(cfg)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const c = { child, seen: [], exited: new Promise((resolve) => child.once("exit", resolve)) };
  c.ready = new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`consumer exited with ${code} before it was ready`)));
    child.on("message", (m) => {
      if (m.type === "ready") resolve();
      else c.seen.push(m);
    });
  });
  c.stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.send({ type: "stop" });
    await c.exited;
  };
  after(() => child.kill("SIGKILL"));
  return c;
}

/** Waits until `check()` is true (polling every 10 ms), at most `ms`. */
async function until(check, ms, what) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test("10^6 pending items: every page in order, each item once, a page at the end as fast as at the start", async () => {
  const q = open();
  const N = 1_000_000;
  const BATCH = 50_000;
  let t = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    const items = [];
    // 1000 distinct deadlines, so that ties (FIFO by seq) are the rule, not the exception.
    for (let j = i; j < i + BATCH; j++) items.push({ value: j, delayMs: 3_600_000 + (j % 1000) * 10, id: `i${j}` });
    await q.offerMany(items);
  }
  say(`offered ${N} items in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  assert.equal((await q.stats()).pending, N);

  const timed = async (opts) => {
    const t0 = performance.now();
    const page = await q.pending(opts);
    return { ms: performance.now() - t0, page };
  };
  const firstSmall = [];
  for (let i = 0; i < 5; i++) firstSmall.push((await timed({ limit: 100 })).ms);

  // Walk every page of 1000: deadline order, FIFO among ties (by offer order: j ascending).
  t = performance.now();
  const ms = [];
  let after;
  let count = 0;
  let last = { deadline: -Infinity, value: -1 };
  let cursorMid;
  do {
    const { ms: took, page } = await timed({ limit: 1000, after });
    ms.push(took);
    for (const item of page.items) {
      assert.ok(
        item.deadline > last.deadline || (item.deadline === last.deadline && item.value > last.value),
        `order at item ${count}: ${JSON.stringify(last)} then ${JSON.stringify(item)}`,
      );
      last = item;
      count++;
    }
    after = page.next;
    if (count === N / 2) cursorMid = after;
  } while (after !== undefined);
  assert.equal(count, N, "every item once");
  const walk = performance.now() - t;
  const start = median(ms.slice(0, 20));
  const end = median(ms.slice(-20));
  say(
    `paged ${N} pending items 1000 at a time in ${(walk / 1000).toFixed(1)} s: median page ${start.toFixed(1)} ms ` +
      `over the first 20 pages, ${end.toFixed(1)} ms over the last 20; a first page of 100: ${median(firstSmall).toFixed(1)} ms`,
  );
  // O(n) paging would make the last pages cost hundreds of times the first.
  assert.ok(end < 5 * start + 20, `the last pages (${end} ms) cost far more than the first (${start} ms)`);

  // A cursor whose item left (cancelled), inside a run of tied deadlines: the next page starts where it stood.
  const page = await q.pending({ limit: 1, after: cursorMid });
  const following = await q.pending({ limit: 100, after: cursorMid });
  assert.equal(following.items[0].id, page.items[0].id);
  assert.equal(await q.cancel(page.items[0].id), true);
  const tied = await timed({ limit: 99, after: page.next });
  assert.deepEqual(
    tied.page.items.map((i) => i.id),
    following.items.slice(1).map((i) => i.id),
  );
  say(`a page of 100 after a cancelled item in the middle (a binary search over its ties): ${tied.ms.toFixed(1)} ms`);
  await q.clear();
});

test("pause() reaches a consumer in another process at once; offers still land; resume() delivers them", async () => {
  const q = open();
  const c = consumer(q.name);
  await c.ready;
  await q.offer("before", 0, { id: "before" });
  await until(() => c.seen.some((m) => m.id === "before"), 10_000, "the first delivery");
  const pausedAt = Date.now();
  assert.equal(await q.pause(), true);
  await until(() => c.seen.some((m) => m.type === "paused"), 5000, "the paused event in the consumer");
  const heard = c.seen.find((m) => m.type === "paused").at - pausedAt;
  say(`the consumer in another process heard pause() ${heard} ms after the call`);
  for (let i = 0; i < 5; i++) await q.offer(i, 0, { id: `held-${i}` });
  await sleep(500);
  assert.equal(c.seen.filter((m) => m.type === "delivered").length, 1, "nothing handed out while paused");
  const stats = await q.stats();
  assert.deepEqual([stats.paused, stats.pending, stats.inFlight], [true, 5, 0]);
  assert.equal(await q.resume(), true);
  await until(() => c.seen.filter((m) => m.type === "delivered").length === 6, 10_000, "the held items after resume()");
  assert.ok(c.seen.some((m) => m.type === "resumed"));
  assert.equal((await q.stats()).paused, false);
  await c.stop();
});

test("observe: every state change of each job across processes, once and in order, across a kill -9 and a lease expiry", async () => {
  const name = `inspect-${++serial}`;
  const observer = new RedisDelayQueue({ redis: server.url, name, observe: true });
  queues.push(observer);
  const log = [];
  for (const type of ["delivered", "acked", "nacked", "redelivered", "dead"]) {
    observer.addEventListener(type, (e) => log.push({ type, ...e.detail }));
  }
  await sleep(300); // the observer marks the queue observed and starts reading
  const holder = consumer(name, "hold", 800, 3);
  await holder.ready;
  const ids = ["j1", "j2", "j3"];
  for (const id of ids) await observer.offer(id, 0, { id });
  await until(() => holder.seen.filter((m) => m.type === "delivered").length === 3, 10_000, "the holder's deliveries");
  holder.child.kill("SIGKILL");
  await holder.exited;
  const finisher = consumer(name, "ack", 5000);
  await finisher.ready;
  await until(() => log.filter((x) => x.type === "acked").length === 3, 15_000, "the acks after the leases expired");
  const of = (id) => log.filter((x) => x.id === id).map((x) => `${x.type} ${x.attempt ?? ""}`.trim());
  for (const id of ids) assert.deepEqual(of(id), ["delivered 1", "redelivered 1", "delivered 2", "acked"], id);
  for (const x of log.filter((x) => x.type === "delivered")) assert.ok(x.lateness >= 0 && x.deadline > 0);
  const all = (await observer.stats()).all;
  assert.deepEqual([all.delivered, all.acked, all.redelivered], [6, 3, 3], "every process's counts, kept in Redis");
  await finisher.stop();
});

test("nobody observing: the scripts append no event", async () => {
  const q = open();
  await q.offer("x", 0, { id: "x" });
  const job = await q.take();
  await job.ack();
  assert.equal(Number(await server.cli("XLEN", q.keys.events)), 0);
  assert.equal(Number(await server.cli("EXISTS", q.keys.observed)), 0);
});

class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  async onForceFlush() {}
  async onShutdown() {}
}

test("metrics: the OpenTelemetry SDK's reader sees this process's lateness and counters, and the queue's gauges", async () => {
  const reader = new Reader();
  const provider = new MeterProvider({ readers: [reader] });
  metrics.disable();
  metrics.setGlobalMeterProvider(provider);
  try {
    const q = open({ maxAttempts: 1 });
    await q.offer("ok", 0, { id: "ok" });
    await q.offer("bad", 0, { id: "bad" });
    await q.offer("later", 3_600_000, { id: "later" });
    for (let i = 0; i < 2; i++) {
      const job = await q.take();
      if (job.value === "ok") await job.ack();
      else await job.nack({ reason: "no" });
    }
    const { resourceMetrics, errors } = await reader.collect();
    assert.deepEqual(errors, []);
    const got = {};
    for (const m of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
      const points = m.dataPoints.filter((p) => p.attributes["tarry.queue.name"] === q.name);
      if (points.length) got[m.descriptor.name] = points[0].value;
    }
    assert.equal(got["tarry.queue.lateness"].count, 2);
    assert.equal(got["tarry.queue.delivered"], 2);
    assert.equal(got["tarry.queue.acked"], 1);
    assert.equal(got["tarry.queue.dead"], 1);
    assert.equal(got["tarry.queue.pending"], 1);
    assert.equal(got["tarry.queue.in_flight"], 0);
    assert.equal(got["tarry.queue.dead_letters"], 1);
  } finally {
    metrics.disable();
    await provider.shutdown();
  }
});

test("error: a consumer's wake that fails is told as an error event (and to onerror)", async () => {
  const errors = [];
  const q = open({ onerror: (e) => errors.push(e) });
  const told = new Promise((resolve) => q.addEventListener("error", (e) => resolve(e.detail.error), { once: true }));
  await server.cli("SET", q.keys.pending, "not a sorted set"); // something else wrote to a key of the queue
  const take = q.take({ timeout: 1000 });
  const error = await told;
  assert.match(String(error.message), /another type of value/);
  assert.ok(errors.includes(error));
  // An error that stays until someone fixes the key: the waiting take rejects with it.
  await assert.rejects(take, (e) => e === error);
  await server.cli("DEL", q.keys.pending);
  assert.equal(await q.take({ timeout: 100 }), undefined);
});
