// The engine contract (cases.mjs) against PostgresDelayQueue, as users import it, on a private
// Postgres 15 cluster (tools/postgres-server.mjs: a free loopback port, removed after):
// one queue per case in one migrated schema. Consumption is process(handler, { retryDelayMs })
// with one slot, stopped once n deliveries have settled; a queue's state is every row the
// schema holds for it.
//
// Where PostgresDelayQueue does not keep the contract yet, the case is listed below with why:
// an expected failure must still fail (with an error matching the pattern), so the list can
// only shrink; a case that needs a method Postgres lacks is left out, and a test checks that
// the method is still missing.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { startPostgres } from "../../tools/postgres-server.mjs";
import { register } from "./register.mjs";

/** @type {Record<string, { why: string, error: RegExp }>} */
const expectedFailures = {};

/** Cases left out: none. @type {Record<string, string>} */
const leftOut = {};

/** Values JSON cannot hold, and the path each TypeError must name. */
const unstorable = [
  ["a bigint inside", { a: { b: 1n } }, ".a.b"],
  ["a Date inside", { when: new Date() }, ".when"],
  ["undefined in an array", { list: [1, undefined] }, ".list[1]"],
  ["a function", () => {}, ""],
];

let server;
let pool;
let serial = 0;

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

test("the cases left out need methods PostgresDelayQueue still lacks", () => {
  for (const [name, method] of Object.entries(leftOut)) {
    assert.equal(typeof PostgresDelayQueue.prototype[method], "undefined", `${method} exists now: run "${name}"`);
  }
});

/** Runs handler on n deliveries with process(), one at a time, then stops (once their acks and nacks are done). */
function consume(queue, n, handler, { retryDelayMs = 1000 } = {}) {
  return new Promise((resolve, reject) => {
    const deliveries = [];
    let worker;
    const timer = setTimeout(() => {
      worker?.close();
      reject(new Error(`consume(): ${deliveries.length} of ${n} deliveries in 20 s`));
    }, 20_000);
    worker = queue.process(
      async (value, job) => {
        deliveries.push({
          id: job.id,
          value,
          deadline: job.deadline,
          attempt: job.attempt,
          schedule: job.schedule,
          at: Date.now(),
        });
        try {
          return await handler(value, job);
        } finally {
          if (deliveries.length === n) {
            worker.close().then(() => {
              clearTimeout(timer);
              resolve(deliveries);
            }, reject);
          }
        }
      },
      { retryDelayMs },
    );
  });
}

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

register(
  async (c) => {
    const queues = [];
    const engine = {
      name: "PostgresDelayQueue",
      open: async (opts) => {
        const q = new PostgresDelayQueue({ pg: pool, name: `contract-${++serial}`, ...opts });
        queues.push(q);
        return q;
      },
      consume,
      state,
      unstorable,
      tied: (name) => name,
    };
    return {
      run: () => c.run(engine),
      dispose: () => Promise.all(queues.map((q) => q.close())),
    };
  },
  { expectedFailures, leftOut },
);
