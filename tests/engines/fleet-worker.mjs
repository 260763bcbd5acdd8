// The body of a worker process of a fleet (./fleet.mjs), for every engine: an engine's worker
// script opens its queues and hands each to consume(); this module runs the mode the test
// asked for and reports to the parent over IPC, in batches every 50 ms: every delivery
// [name, id, time, deadline, attempt, value, schedule], and every ack of a take() loop
// [name, id, held].
//
// cfg.mode "take": `concurrency` take() loops that ack each job (and report whether the ack
// held); "process": process() with a handler that returns at once; "hold": process() with a
// handler that never returns (its leases are extended until the process dies); "slow":
// process() with a handler that takes cfg.handleMs; "throw": process() with a handler that
// always throws.

/** @param {{ mode: string, concurrency: number, handleMs?: number }} cfg */
export function fleetWorker(cfg) {
  let errors = 0;
  let got = [];
  let acks = [];
  const flush = () => {
    if (got.length || acks.length) process.send({ type: "got", got, acks });
    got = [];
    acks = [];
  };
  const flusher = setInterval(flush, 50);
  const record = (name, job) =>
    got.push([name, job.id, Date.now(), job.deadline, job.attempt, job.value, job.schedule]);
  const handlers = {
    process: async () => {},
    hold: () => new Promise(() => {}),
    slow: () => new Promise((r) => setTimeout(r, cfg.handleMs)),
    throw: async () => {
      throw new Error("this handler always fails");
    },
  };
  return {
    /** Counts an error the engine reports (the queue's onerror). */
    onerror: () => errors++,
    /** Consumes queue `q` (named `name` in the reports) as cfg.mode says; the process() worker, or null. */
    consume(name, q, processOptions = {}) {
      if (cfg.mode === "take") {
        for (let c = 0; c < cfg.concurrency; c++) {
          (async () => {
            for await (const job of q) {
              record(name, job);
              try {
                acks.push([name, job.id, await job.ack()]);
              } catch {
                errors++; // the server unreachable: the lease runs out and the item comes back
              }
            }
          })();
        }
        return null;
      }
      const handler = handlers[cfg.mode];
      if (handler === undefined) throw new Error(`no worker mode ${cfg.mode}`);
      return q.process(
        (_value, job) => {
          record(name, job);
          return handler();
        },
        { concurrency: cfg.concurrency, ...processOptions },
      );
    },
    /** Tells the parent the process is consuming; on "stop", awaits `stop()` (closing what it opened), reports the rest and exits. */
    ready(stop) {
      process.send({ type: "ready" });
      process.on("message", async (m) => {
        if (m.type !== "stop") return;
        await stop();
        clearInterval(flusher);
        flush();
        process.send({ type: "stopped", errors }, () => process.exit(0));
      });
    },
  };
}
