// The Redis fleet: worker and producer processes (./worker.mjs, ./producer.mjs) forked
// through tests/engines/fleet.mjs, whose checks (check(), until(), ...) the Redis tests use
// from here, and the correctness run of tests/redis/correctness.test.mjs and the cluster tests.

import * as fleet from "../engines/fleet.mjs";
import { allDelivered, check, expected, until } from "../engines/fleet.mjs";

export { allDelivered, check, expected, until };

/** A worker process (./worker.mjs): its deliveries arrive in `got`, its acks in `acks`. */
export const startWorker = (cfg) => fleet.startWorker(new URL("./worker.mjs", import.meta.url), cfg);

/** The producer process (./producer.mjs); resolves with what it offered. */
export const produce = (cfg) => fleet.produce(new URL("./producer.mjs", import.meta.url), cfg);

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
