// A worker process for tests/postgres/faults.test.mjs (forked by ./faults-fleet.mjs): consumes
// one queue and reports every delivery to its parent over IPC, in batches: [id, time,
// deadline, attempt, value], and every ack: [id, held].
//
// argv[2]: JSON { url, name, mode, concurrency, visibilityTimeout, safetyInterval, schema }
// mode "process": process() with a handler that returns at once; "take": take() loops that
// ack each job (and report whether the ack held); "hold": process() with a handler that never
// returns (its leases are extended until the process dies).

import { PostgresDelayQueue } from "tarry-queue/postgres";
import { load } from "../../tools/pg-deps.mjs";

const pg = (await load("pg")).default;
const cfg = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: cfg.url, max: 10 });
pool.on("error", () => {}); // a terminated backend or a restart: the queue reconnects
let errors = 0;
const q = new PostgresDelayQueue({
  pg: pool,
  name: cfg.name,
  schema: cfg.schema,
  visibilityTimeout: cfg.visibilityTimeout ?? 5000,
  safetyInterval: cfg.safetyInterval ?? 5000,
  onerror: () => errors++,
});

let got = [];
let acks = [];
const flush = () => {
  if (got.length || acks.length) process.send({ type: "got", got, acks });
  got = [];
  acks = [];
};
const flusher = setInterval(flush, 50);
const record = (job) => got.push([job.id, Date.now(), job.deadline, job.attempt, job.value]);

await q.migrate(); // idempotent: every worker may run it

let worker = null;
if (cfg.mode === "take") {
  for (let c = 0; c < cfg.concurrency; c++) {
    (async () => {
      for await (const job of q) {
        record(job);
        try {
          acks.push([job.id, await job.ack()]);
        } catch {
          errors++; // Postgres unreachable: the lease runs out and the item comes back
        }
      }
    })();
  }
} else {
  const handler = { process: async () => {}, hold: () => new Promise(() => {}) }[cfg.mode];
  worker = q.process(
    (_value, job) => {
      record(job);
      return handler();
    },
    { concurrency: cfg.concurrency },
  );
}

await q.stats(); // connected
process.send({ type: "ready" });

process.on("message", async (m) => {
  if (m.type !== "stop") return;
  await worker?.close();
  await q.close();
  await pool.end();
  clearInterval(flusher);
  flush();
  process.send({ type: "stopped", errors }, () => process.exit(0));
});
