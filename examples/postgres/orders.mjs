// Orders that cancel themselves unless paid, on Postgres: `npm run example:postgres` starts a
// private Postgres (tools/postgres-server.mjs). Each order's row and its cancellation are written
// in ONE transaction: both commit, or neither does. Paying marks the row paid and cancels the
// cancellation in one transaction too. A worker cancels, in its own transaction, each order
// still unpaid when its window closes. An order whose transaction rolls back leaves no row and
// no cancellation.

import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { startPostgres } from "../../tools/postgres-server.mjs";

const t0 = Date.now();
const at = () => `${String(Date.now() - t0).padStart(5)} ms`;

const server = await startPostgres();
console.log(`${at()}  private Postgres on ${server.url}`);
const pool = new pg.Pool({ connectionString: server.url });
await pool.query("CREATE TABLE orders (id text PRIMARY KEY, state text NOT NULL)");

const queue = new PostgresDelayQueue({ pg: pool, name: "order-timeouts" });
await queue.migrate(); // idempotent: creates the schema "tarry" the first time

/** Runs body(client) in one transaction on one of the pool's connections. */
async function transaction(body) {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (e) {
    await client.query("ROLLBACK");
    throw e;
  } finally {
    client.release();
  }
}

/** The order's row and its cancellation, committed together. */
const place = (id, windowMs) =>
  transaction(async (client) => {
    await client.query("INSERT INTO orders (id, state) VALUES ($1, 'unpaid')", [id]);
    await queue.offer({ orderId: id }, windowMs, { id, client });
    console.log(`${at()}  order ${id} placed, pay within ${windowMs} ms`);
  });

/** Paid: the row says so and its cancellation is gone, together. */
const pay = (id) =>
  transaction(async (client) => {
    await client.query("UPDATE orders SET state = 'paid' WHERE id = $1", [id]);
    const cancelled = await queue.cancel(id, { client });
    console.log(`${at()}  order ${id} paid${cancelled ? ": its cancellation is withdrawn" : " too late"}`);
  });

// The worker: each order still unpaid when its window closes is cancelled.
const cancelled = [];
const worker = queue.process(async ({ orderId }, job) => {
  const { rowCount } = await pool.query("UPDATE orders SET state = 'cancelled' WHERE id = $1 AND state = 'unpaid'", [
    orderId,
  ]);
  const late = Math.round(Date.now() - job.deadline);
  console.log(
    `${at()}  order ${orderId} ${rowCount ? "CANCELLED, not paid in time" : "was paid"} (${late} ms after its window closed)`,
  );
  cancelled.push(orderId);
});

await place("order-1", 500);
await place("order-2", 800);
await place("order-3", 1100);
// An order whose transaction fails after the offer: no row, and no cancellation either.
try {
  await transaction(async (client) => {
    await queue.offer({ orderId: "order-1" }, 300, { id: "order-1-again", client });
    await client.query("INSERT INTO orders (id, state) VALUES ('order-1', 'unpaid')"); // a duplicate key
  });
} catch (e) {
  console.log(`${at()}  a second order-1 failed (${e.message}): rolled back, its cancellation with it`);
}
await pay("order-2");

while (cancelled.length < 2) await new Promise((r) => setTimeout(r, 50));
const { rows } = await pool.query("SELECT id, state FROM orders ORDER BY id");
console.log(`${at()}  orders: ${rows.map((r) => `${r.id} ${r.state}`).join(", ")}`);
console.log(`${at()}  the rolled-back cancellation exists: ${(await queue.get("order-1-again")) !== undefined}`);
await worker.close();
await queue.close();
await pool.end();
await server.stop();
