// Offers inside the caller's transaction: a rollback leaves no row and nothing is delivered;
// a commit delivers the item once. The NOTIFY that wakes consumers goes out at the commit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { fresh, privatePostgres } from "./fixture.mjs";

const pg = privatePostgres();

test("migrate() creates the schema once; a second run applies nothing", async () => {
  const q = new PostgresDelayQueue({ pg: pg.pool, name: fresh("m") });
  assert.deepEqual(await q.migrate(), [1]);
  assert.deepEqual(await q.migrate(), []);
  await q.close();
});

test("an offer in a transaction that rolls back leaves no row and is never delivered; one that commits is delivered once", async () => {
  const q = new PostgresDelayQueue({ pg: pg.pool, name: fresh("tx") });
  await q.migrate();
  const got = [];
  const worker = q.process((value, job) => {
    got.push([job.id, value]);
  });
  const client = await pg.pool.connect();
  try {
    await client.query("BEGIN");
    await q.offer({ order: 1 }, 0, { id: "rolled-back", client });
    assert.equal(await q.get("rolled-back"), undefined, "not visible outside the transaction");
    await client.query("ROLLBACK");
    await client.query("BEGIN");
    await q.offer({ order: 2 }, 0, { id: "committed", client });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(got, [], "nothing delivered before the commit");
    await client.query("COMMIT");
  } finally {
    client.release();
  }
  const until = Date.now() + 10_000;
  while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(got, [["committed", { order: 2 }]]);
  await worker.close();
  assert.equal(await q.get("rolled-back"), undefined);
  const rows = await pg.pool.query("SELECT count(*)::int AS n FROM tarry.items WHERE queue = $1", [q.name]);
  assert.equal(rows.rows[0].n, 0, "the rollback left no row, the ack removed the other");
  await q.close();
});
