// Offers inside the caller's transaction: a rollback leaves no row and nothing is delivered;
// a commit delivers the item once. The NOTIFY that wakes consumers goes out at the commit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { migrations } from "../../js/postgres/migrate.js";
import { fresh, privatePostgres } from "./fixture.mjs";

const pg = privatePostgres();

test("migrate() creates the schema once; a second run applies nothing", async () => {
  const q = new PostgresDelayQueue({ pg: pg.pool, name: fresh("m") });
  assert.deepEqual(
    await q.migrate(),
    (await migrations()).map((m) => m.version),
  );
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

test("cancel, reschedule and offerMany in a transaction take effect at its commit, and not at all on rollback", async () => {
  const q = new PostgresDelayQueue({ pg: pg.pool, name: fresh("tx2") });
  await q.migrate();
  await q.offer("kept", 3_600_000, { id: "a" });
  const client = await pg.pool.connect();
  try {
    await client.query("BEGIN");
    assert.equal(await q.cancel("a", { client }), true);
    assert.deepEqual(await q.offerMany([{ value: 1, delayMs: 1000, id: "m1" }], { client }), ["m1"]);
    await client.query("ROLLBACK");
    assert.equal((await q.get("a")).state, "pending", "the cancel was rolled back");
    assert.equal(await q.get("m1"), undefined, "the offers were rolled back");
    await client.query("BEGIN");
    assert.equal(await q.reschedule("a", 10, { client }), true);
    assert.ok((await q.delayOf("a")) > 3_000_000, "not rescheduled before the commit");
    await client.query("COMMIT");
  } finally {
    client.release();
  }
  assert.ok((await q.delayOf("a")) <= 10);
  await q.close();
});

test("a client with no transaction open: each call commits on its own (autocommit), visible at once", async () => {
  const q = new PostgresDelayQueue({ pg: pg.url, name: fresh("auto") });
  const client = await pg.pool.connect();
  try {
    await q.offer("now", 0, { id: "n", client });
    assert.equal((await q.get("n")).state, "pending");
  } finally {
    client.release();
  }
  const job = await q.take({ timeout: 5000 });
  assert.equal(job?.id, "n", "delivered: the NOTIFY went out with the statement's own commit");
  await job.ack();
  await assert.rejects(q.offer("x", 0, { client: {} }), /options\.client must be a pg client/);
  await q.close();
});
