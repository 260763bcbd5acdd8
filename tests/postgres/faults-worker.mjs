// A worker process for tests/postgres/faults.test.mjs: consumes one queue as
// tests/engines/fleet-worker.mjs does for every engine, and reports each delivery and ack to
// its parent.
//
// argv[2]: JSON { url, name, mode, concurrency, visibilityTimeout, safetyInterval, schema }
// (mode: tests/engines/fleet-worker.mjs; these tests use "process", "take" and "hold")

import { PostgresDelayQueue } from "tarry-queue/postgres";
import { load } from "../../tools/pg-deps.mjs";
import { fleetWorker } from "../engines/fleet-worker.mjs";

const pg = (await load("pg")).default;
const cfg = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ connectionString: cfg.url, max: 10 });
pool.on("error", () => {}); // a terminated backend or a restart: the queue reconnects
const fleet = fleetWorker(cfg);
const q = new PostgresDelayQueue({
  pg: pool,
  name: cfg.name,
  schema: cfg.schema,
  visibilityTimeout: cfg.visibilityTimeout ?? 5000,
  safetyInterval: cfg.safetyInterval ?? 5000,
  onerror: fleet.onerror,
});

await q.migrate(); // idempotent: every worker may run it
const worker = fleet.consume(cfg.name, q);

await q.stats(); // connected
fleet.ready(async () => {
  await worker?.close();
  await q.close();
  await pool.end();
});
