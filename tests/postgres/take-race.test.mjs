// The take statement beside another take: each hands out exactly the items its own UPDATE
// leased. Two takes that read the same clock microsecond once matched each other's rows by
// their lease (expiry = time + lease): the take that the other one's commit overtook handed
// out the other's items too, a duplicate delivery with attempt 1 on both (seen about once in
// 10^4 items in the three-worker fleet under load). Here the overlap is made certain: the
// schema's clock stands still and a row trigger holds the first take inside its statement
// until the second one committed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { privatePostgres } from "./fixture.mjs";

const db = privatePostgres();

test("two takes at the same server microsecond: each hands out only the items it leased", async () => {
  const schema = "race";
  const name = "race";
  const q = new PostgresDelayQueue({ pg: db.pool, name, schema });
  await q.migrate();
  await db.pool.query(`CREATE OR REPLACE FUNCTION "${schema}".clock() RETURNS float8 LANGUAGE sql VOLATILE
    AS $$ SELECT 1.7e12::float8 $$`);
  await db.pool.query(`CREATE FUNCTION "${schema}".hold() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.state = 'l' AND NEW.id = convert_to('slow', 'UTF8') THEN PERFORM pg_advisory_xact_lock(7331); END IF;
    RETURN NEW; END $$`);
  await db.pool.query(
    `CREATE TRIGGER hold AFTER UPDATE ON "${schema}".items FOR EACH ROW EXECUTE FUNCTION "${schema}".hold()`,
  );
  // Absolute deadlines, both due by the frozen clock, "slow" the head: a delay would count
  // from the call, back from the frozen clock by however long the call took to be sent, so
  // that under load "fast" could come first.
  await q.offerAt("s", 1.7e12 - 2000, { id: "slow" });
  await q.offerAt("f", 1.7e12 - 1000, { id: "fast" });

  const gate = await db.pool.connect();
  const first = await db.pool.connect();
  const second = await db.pool.connect();
  const take = `SELECT kind, convert_from(id, 'UTF8') AS id, token::text AS token FROM "${schema}".take($1, 1, 30000, 5)`;
  const taken = (/** @type {any} */ r) => r.rows.filter((row) => row.kind === "t").map((row) => row.id);
  try {
    await gate.query("SELECT pg_advisory_lock(7331)");
    // The first take leases the head ("slow") and waits in its row trigger, inside the statement.
    const a = first.query(take, [name]);
    for (let i = 0; ; i++) {
      const { rows } = await gate.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 7331 AND NOT granted",
      );
      if (rows[0].n === 1) break;
      assert.ok(i < 500, "the first take never reached its trigger");
      await new Promise((r) => setTimeout(r, 10));
    }
    // The second skips the locked head, leases "fast" at the same clock value and commits.
    assert.deepEqual(taken(await second.query(take, [name])), ["fast"]);
    await gate.query("SELECT pg_advisory_unlock(7331)");
    assert.deepEqual(taken(await a), ["slow"], "the first take hands out its own item only");
  } finally {
    gate.release();
    first.release();
    second.release();
    await q.close();
  }
});
