// Worker and producer processes for the Redis tests, and the checks of what they report.

import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** A worker process (tests/redis/worker.mjs): its deliveries arrive in `got`, its acks in `acks`. */
export function startWorker(cfg) {
  const child = fork(here("./worker.mjs"), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const w = { child, got: [], acks: [], errors: 0, exited: new Promise((r) => child.once("exit", r)) };
  w.ready = new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`worker exited with ${code} before it was ready`)));
    child.on("message", (m) => {
      if (m.type === "ready") resolve();
      if (m.type === "got") {
        w.got.push(...m.got);
        w.acks.push(...m.acks);
      }
      if (m.type === "stopped") w.errors = m.errors;
    });
  });
  w.ready.catch(() => {});
  /** Closes its queues (running handlers finish) and waits for the process to end. */
  w.stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.send({ type: "stop" });
    await w.exited;
  };
  return w;
}

/** The producer process (tests/redis/producer.mjs); resolves with what it offered. */
export function produce(cfg) {
  const child = fork(here("./producer.mjs"), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    let result;
    child.on("message", (m) => m.type === "produced" && (result = m));
    child.once("exit", (code) => (result ? resolve(result) : reject(new Error(`producer exited with ${code}`))));
  });
}

/** Resolves once `test()` holds, polling every 50 ms; rejects after `ms`. */
export async function until(test, ms, what) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const key = (name, id) => `${name}\u0000${id}`;

/** Each offered item's latest offer: key -> { notBefore, version }. */
export function expected(produced) {
  const want = new Map();
  for (const [name, id, notBefore, version] of produced.offered) want.set(key(name, id), { notBefore, version });
  return want;
}

/** Whether every expected item has been delivered at least once by some worker. */
export function allDelivered(want, workers) {
  const seen = new Set();
  for (const w of workers) for (const [name, id] of w.got) seen.add(key(name, id));
  for (const k of want.keys()) if (!seen.has(k)) return false;
  return true;
}

/**
 * The checks of a run: nothing lost, nothing early (by the producer's clock before its call,
 * and by the server's deadline), cancelled items never delivered, replaced ones only in their
 * new version; with `exactlyOnce`, each delivered once (attempt 1), acked once, and each
 * worker's deliveries per queue in deadline order (per `orderOf(name, id)`: the queue, or for
 * a queue over several shards its shard). Returns lateness figures (ms).
 */
export function check(produced, workers, { exactlyOnce, cancelled = produced.cancelled, orderOf = (name) => name }) {
  const want = expected(produced);
  const deliveries = new Map();
  const lateness = [];
  for (const [wi, w] of workers.entries()) {
    const last = new Map();
    for (const [name, id, at, deadline, attempt, value] of w.got) {
      const k = key(name, id);
      const item = want.get(k);
      assert.ok(item, `worker ${wi} got ${name}/${id}, which was never offered (or was cancelled)`);
      assert.ok(
        at >= item.notBefore,
        `${name}/${id} came out ${item.notBefore - at} ms early (by the producer's clock)`,
      );
      assert.ok(
        Math.floor(deadline) <= at,
        `${name}/${id} came out before its deadline (server time ${deadline}, now ${at})`,
      );
      assert.equal(value.v, item.version, `${name}/${id} came out in version ${value.v}, not the latest offer's`);
      lateness.push(at - item.notBefore);
      deliveries.set(k, (deliveries.get(k) ?? 0) + 1);
      if (exactlyOnce) {
        assert.equal(attempt, 1, `${name}/${id} was delivered as attempt ${attempt} in a run without faults`);
        const order = orderOf(name, id);
        assert.ok(
          deadline >= (last.get(order) ?? 0),
          `worker ${wi} got ${name}/${id} (deadline ${deadline}) after an item due later (${last.get(order)}) of ${order}`,
        );
        last.set(order, deadline);
      }
    }
  }
  for (const [name, id] of cancelled) assert.ok(!deliveries.has(key(name, id)), `cancelled ${name}/${id} came out`);
  const lost = [...want.keys()].filter((k) => !deliveries.has(k));
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} items were never delivered`);
  if (exactlyOnce) {
    for (const [k, n] of deliveries) assert.equal(n, 1, `${k} was delivered ${n} times`);
    const acked = new Map();
    for (const w of workers)
      for (const [name, id, ok] of w.acks) if (ok) acked.set(key(name, id), (acked.get(key(name, id)) ?? 0) + 1);
    for (const [k, n] of acked) assert.equal(n, 1, `${k} was completed ${n} times`);
  }
  lateness.sort((a, b) => a - b);
  const q = (p) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))];
  return { delivered: lateness.length, p50: q(0.5), p99: q(0.99), max: lateness[lateness.length - 1] };
}

/**
 * The correctness run: three worker processes (two take() loops, one process()) consume the
 * queues in `base.names` while a producer offers `count` items to each, due in 1-5 s, plus 300
 * with cancels, reschedules and replacements. Checks it exactly (exactlyOnce) and returns the
 * lateness figures. `workers` receives the processes, for the caller to kill afterwards.
 * `orderOf`: what each worker's deliveries are in deadline order within (check()).
 */
export async function correctnessRun(base, count, workers, orderOf = undefined) {
  workers.push(startWorker({ ...base, mode: "take" }), startWorker({ ...base, mode: "take" }));
  workers.push(startWorker({ ...base, mode: "process" }));
  await Promise.all(workers.map((w) => w.ready));
  const produced = await produce({ ...base, count, minDelay: 1000, maxDelay: 5000, edits: true });
  const want = expected(produced);
  await until(() => allDelivered(want, workers), 30_000, "every item to be delivered");
  // Anything delivered twice, or a cancelled item, would show up in this second.
  await new Promise((r) => setTimeout(r, 1000));
  await Promise.all(workers.map((w) => w.stop()));
  const figures = check(produced, workers, { exactlyOnce: true, orderOf });
  if (figures.p50 > 1000) throw new Error(`median lateness ${figures.p50} ms: the wake-ups are not working`);
  return figures;
}
