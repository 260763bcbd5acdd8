// The engine contract (cases.mjs) against PostgresDelayQueue, as users import it, on a private
// Postgres 15 cluster (tools/postgres-server.mjs: a free loopback port, removed after):
// one queue per case in one migrated schema, run by server-engine.mjs (consumed by process());
// a queue's state is every row the schema holds for it.
//
// Where PostgresDelayQueue does not keep the contract yet, the case is listed below with why
// (server-engine.mjs holds both lists to their word).
import { after, before } from "node:test";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { startPostgres } from "../../tools/postgres-server.mjs";
import { runServerEngine } from "./server-engine.mjs";

/** @type {Record<string, { why: string, error: RegExp }>} */
const expectedFailures = {};

/** Cases left out: none. @type {Record<string, string>} */
const leftOut = {};

let server;
let pool;

before(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 20 });
  pool.on("error", () => {});
  await new PostgresDelayQueue({ pg: pool, name: "migrate" }).migrate();
});

after(async () => {
  await pool?.end();
  await server?.stop();
});

/** Every row the schema holds for the queue. */
async function state(queue) {
  const items = await pool.query(
    "SELECT encode(id, 'hex') AS id, state, deadline, value, attempt, expiry, reason, died, schedule FROM tarry.items WHERE queue = $1 ORDER BY id",
    [queue.name],
  );
  const schedules = await pool.query("SELECT * FROM tarry.schedules WHERE queue = $1 ORDER BY id", [queue.name]);
  const queues = await pool.query("SELECT * FROM tarry.queues WHERE queue = $1", [queue.name]);
  return { items: items.rows, schedules: schedules.rows, queues: queues.rows };
}

runServerEngine({
  name: "PostgresDelayQueue",
  Queue: PostgresDelayQueue,
  open: (name, opts) => new PostgresDelayQueue({ pg: pool, name, ...opts }),
  state,
  expectedFailures,
  leftOut,
});
