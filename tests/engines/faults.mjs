// The fault runs every durable engine goes through alike, on a fleet (./fleet.mjs) the
// engine's test starts: each takes the engine's startWorker() and a queue of its own on the
// same server, and asserts what the contract promises whatever the engine.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { until } from "./fleet.mjs";

/**
 * kill -9 of a worker holding 20 leased items: while it lives, its leases are extended and no
 * other worker gets them; once killed, another gets all 20 (attempt 2) within
 * visibilityTimeout + 1 s, and the queue is left empty. Returns ms from the kill until the last came back.
 * @param {object} run
 * @param {(cfg: object) => any} run.startWorker the engine's worker (./fleet.mjs startWorker with its script)
 * @param {object} run.base the workers' cfg, with `visibilityTimeout`
 * @param {any} run.queue the same queue, opened in this process
 * @param {any[]} run.workers receives the processes, for the caller to kill afterwards
 * @param {number} run.comeBackMs how long to wait for the 20 to come back before failing
 * @param {number} run.settleMs how long the last acks get before the queue must be empty
 */
export async function killLeaseHolder({ startWorker, base, queue, workers, comeBackMs, settleMs }) {
  const vis = base.visibilityTimeout;
  const holder = startWorker({ ...base, mode: "hold", concurrency: 20 });
  workers.push(holder);
  await holder.ready;
  const ids = await queue.offerMany(Array.from({ length: 20 }, (_, n) => ({ value: { n, v: 1 }, delayMs: 0 })));
  await until(() => holder.got.length === 20, 10_000, "the holder to lease all 20");
  const other = startWorker({ ...base, mode: "process", concurrency: 20 });
  workers.push(other);
  await other.ready;
  // The holder's handlers run for two lease lengths: its leases are extended meanwhile.
  await sleep(2 * vis);
  assert.equal(other.got.length, 0, "an item was redelivered while its holder was alive and extending");
  const killed = Date.now();
  holder.child.kill("SIGKILL");
  await until(() => other.got.length >= 20, comeBackMs, "the 20 leased items to come back");
  const back = Math.max(...other.got.map((g) => g[2])) - killed;
  console.log(
    `# kill -9 with 20 items leased: all 20 redelivered ${back} ms after the kill (visibilityTimeout ${vis} ms)`,
  );
  assert.deepEqual(other.got.map((g) => g[1]).sort(), [...ids].sort());
  assert.ok(
    other.got.every((g) => g[4] === 2),
    "redelivered items carry attempt 2",
  );
  assert.ok(back <= vis + 1000, `redelivered ${back} ms after the kill, more than visibilityTimeout + 1 s`);
  await sleep(settleMs);
  const s = await queue.stats();
  assert.deepEqual([s.pending, s.inFlight], [0, 0]);
  await other.stop();
  return back;
}
