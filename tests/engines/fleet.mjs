// A fleet of processes on one durable engine, and the checks of what they report: worker
// processes (an engine's worker script, built on ./fleet-worker.mjs) and a producer process
// (an engine's producer script), forked here, and check(), one rule for every engine of what a
// run may and may not deliver. tests/redis/fleet.mjs and tests/postgres/faults.test.mjs
// fork their engine's scripts through it.
//
// What the processes report, the same on every engine:
//   a worker's deliveries `got`: [name, id, time, deadline, attempt, value, schedule], its
//     take() loops' acks `acks`: [name, id, held] (./fleet-worker.mjs);
//   the producer's `offered`: [name, id, notBefore, version] for each offer that resolved
//     (notBefore: its clock before the call + the delay; version: value.v), and where the
//     engine has them, `cancelled` ([name, id]: never to come out) and `maybe` (like
//     `offered`: rejected offers, whose items may or may not have been stored).

import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A worker process running `script` (a file URL): its deliveries arrive in `got`, its acks in `acks`. */
export function startWorker(script, cfg) {
  const child = fork(fileURLToPath(script), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
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

/** The producer process running `script` (a file URL); resolves with what it reported (`offered` and the rest). */
export function produce(script, cfg) {
  const child = fork(fileURLToPath(script), [JSON.stringify(cfg)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    let result;
    child.on("message", (m) => m.type === "produced" && (result = m));
    child.once("exit", (code) => (result ? resolve(result) : reject(new Error(`producer exited with ${code}`))));
  });
}

/** Resolves once `test()` holds, polling every 50 ms; rejects after `ms`, naming what it waited for. */
export async function until(test, ms, what) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const key = (name, id) => `${name}\u0000${id}`;
const shown = (k) => k.replace("\u0000", "/");

/** Each offered item's latest offer: key -> { notBefore, version } (of `produced.offered`, or of `list`). */
export function expected(produced, list = produced.offered) {
  const want = new Map();
  for (const [name, id, notBefore, version] of list) want.set(key(name, id), { notBefore, version });
  return want;
}

/** Whether every expected item (expected()) has been delivered at least once by some worker. */
export function allDelivered(want, workers) {
  const seen = new Set();
  for (const w of workers) for (const [name, id] of w.got) seen.add(key(name, id));
  for (const k of want.keys()) if (!seen.has(k)) return false;
  return true;
}

/**
 * The checks of a run: nothing lost that an offer resolved, nothing early (by the producer's
 * clock before its call, and by the server's deadline), nothing never offered, cancelled items
 * never delivered, replaced ones only in their new version (a rejected offer's item,
 * `produced.maybe`, may come out: its write may have gone through; it is neither promised nor
 * counted). With `exactlyOnce`: each delivered once (attempt 1), acked at most once, and each
 * worker's deliveries in deadline order within `orderOf(name, id)` (the queue, or for a queue
 * over several shards its shard).
 *
 * Returns the items delivered (`delivered`) and lateness figures (ms).
 */
export function check(
  produced,
  workers,
  { exactlyOnce, cancelled = produced.cancelled ?? [], orderOf = (name) => name },
) {
  const want = expected(produced);
  const maybe = expected(produced, produced.maybe ?? []);
  const deliveries = new Map();
  const lateness = [];
  for (const [wi, w] of workers.entries()) {
    const last = new Map();
    for (const [name, id, at, deadline, attempt, value] of w.got) {
      const k = key(name, id);
      const item = want.get(k) ?? maybe.get(k);
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
      if (!want.has(k)) continue; // a rejected offer's item: neither promised nor counted
      lateness.push(at - item.notBefore);
      deliveries.set(k, (deliveries.get(k) ?? 0) + 1);
      if (exactlyOnce) {
        assert.equal(attempt, 1, `${name}/${id} was delivered as attempt ${attempt} in a run without faults`);
        const order = orderOf(name, id);
        assert.ok(
          deadline >= (last.get(order) ?? -Infinity),
          `worker ${wi} got ${name}/${id} (deadline ${deadline}) after an item due later (${last.get(order)}) of ${order}`,
        );
        last.set(order, deadline);
      }
    }
  }
  for (const [name, id] of cancelled) assert.ok(!deliveries.has(key(name, id)), `cancelled ${name}/${id} came out`);
  const lost = [...want.keys()].filter((k) => !deliveries.has(k));
  assert.deepEqual(
    lost.slice(0, 10).map(shown),
    [],
    `${lost.length} items that an offer resolved were never delivered`,
  );
  const twice = [];
  if (exactlyOnce) {
    for (const [k, n] of deliveries) if (n > 1) twice.push(`${shown(k)} delivered ${n} times`);
    const acked = new Map();
    for (const w of workers)
      for (const [name, id, ok] of w.acks) if (ok) acked.set(key(name, id), (acked.get(key(name, id)) ?? 0) + 1);
    for (const [k, n] of acked) if (n > 1) twice.push(`${shown(k)} completed ${n} times`);
    assert.deepEqual(twice.slice(0, 10), [], `${twice.length} delivered or completed more than once`);
  }
  lateness.sort((a, b) => a - b);
  const q = (p) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))];
  return { delivered: deliveries.size, p50: q(0.5), p99: q(0.99), max: lateness.at(-1) };
}
