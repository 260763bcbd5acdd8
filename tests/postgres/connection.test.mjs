// The queue's connection to Postgres: what it refuses at once, what a call does when Postgres
// is down (rejects within commandTimeout, saying so, quoting no password), the LISTEN
// connection coming back after pg_terminate_backend, and migrate() from many at once.
import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { migrations } from "../../js/postgres/migrate.js";
import { fresh, privatePostgres } from "./fixture.mjs";

const db = privatePostgres();

test("a connection string that is not postgres:// is refused at once, naming options.pg and quoting no password", () => {
  for (const url of ["redis://:secret@127.0.0.1:6379", "mysql://root:secret@localhost/db", "not a url secret"]) {
    assert.throws(
      () => new PostgresDelayQueue({ pg: url, name: "x" }),
      (e) => e instanceof TypeError && /options\.pg/.test(e.message) && !e.message.includes("secret"),
    );
  }
  assert.throws(
    () => new PostgresDelayQueue({ pg: 42, name: "x" }),
    /options\.pg must be a postgres:\/\/ URL or a pg\.Pool/,
  );
  assert.throws(() => new PostgresDelayQueue({ pg: db.url, name: "x", schema: "bad-name" }), RangeError);
  assert.throws(() => new PostgresDelayQueue({ pg: db.url, name: "x", shards: 2 }), /shards/);
});

test("Postgres down: a call rejects within commandTimeout saying so, and the password is not in the message", async () => {
  // A port nobody listens on, and one that accepts connections but never answers.
  const { createServer } = await import("node:net");
  const silent = createServer(() => {});
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  const port = silent.address().port;
  const q = new PostgresDelayQueue({
    pg: `postgres://me:hunter2@127.0.0.1:${port}/db`,
    name: fresh("down"),
    commandTimeout: 500,
  });
  const t = Date.now();
  const e = await q.offer("x", 0).then(
    () => null,
    (e) => e,
  );
  const took = Date.now() - t;
  assert.ok(e instanceof Error, "rejected");
  assert.match(e.message, /no connection to Postgres within 500 ms \(commandTimeout\)/);
  assert.ok(!String(e.stack).includes("hunter2"), e.stack);
  assert.ok(took >= 450 && took < 5000, `rejected after ${took} ms`);
  await q.close();
  silent.close();
  const refused = new PostgresDelayQueue({
    pg: "postgres://me:hunter2@127.0.0.1:1/db",
    name: "r",
    commandTimeout: 2000,
  });
  const r = await refused.size().then(
    () => null,
    (e) => e,
  );
  assert.match(r.message, /size\(\) could not reach Postgres: .*ECONNREFUSED/);
  assert.ok(!String(r.stack).includes("hunter2"));
  await refused.close();
});

test("migrate() from five queues on five pools at once: one applies the schema, the others find it done", async () => {
  const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: db.url, max: 1 }));
  const schema = `m${process.pid}`;
  const applied = await Promise.all(
    pools.map((pool) => new PostgresDelayQueue({ pg: pool, name: "m", schema }).migrate()),
  );
  assert.deepEqual(applied.map((a) => a.length).sort(), [0, 0, 0, 0, (await migrations()).length]);
  const q = new PostgresDelayQueue({ pg: pools[0], name: "m", schema });
  assert.equal(typeof (await q.offer("in the new schema", 0)), "string");
  assert.equal(await q.size(), 1);
  await q.close();
  await Promise.all(pools.map((p) => p.end()));
});

test("the LISTEN connection and the pool's connections killed (pg_terminate_backend): the consumer reconnects, looks again, and goes on", async () => {
  const errors = [];
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("kill"), onerror: (e) => errors.push(e) });
  await q.migrate();
  const got = [];
  const worker = q.process((v) => {
    got.push(v);
  });
  await q.offer("before", 0);
  const until = (n) =>
    (async () => {
      const end = Date.now() + 15_000;
      while (got.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    })();
  await until(1);
  // Every other session of the cluster, the LISTEN connection among them.
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const { rows } = await admin.query(
    "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
  );
  assert.ok(rows[0].n >= 1, "sessions terminated");
  await admin.end();
  // An item due in 300 ms: the timer must be armed again once the listener is back.
  const later = new PostgresDelayQueue({ pg: db.url, name: q.name });
  const offered = Date.now();
  await later.offer("after", 300);
  await until(2);
  assert.deepEqual(got, ["before", "after"]);
  assert.ok(Date.now() >= offered + 300, "never early");
  await worker.close();
  await later.close();
  await q.close();
});

test("Postgres crash-restarted (pg_ctl restart -m immediate): a resolved offer survives, and the consumer goes on", async () => {
  const errors = [];
  const q = new PostgresDelayQueue({ pg: db.pool, name: fresh("crash"), onerror: (e) => errors.push(e) });
  await q.migrate();
  await q.offer("survives", 1500, { id: "s" });
  const got = [];
  const worker = q.process((v) => {
    got.push(v);
  });
  await db.server.restart({ immediate: true });
  await q.offer("after the restart", 0, { id: "a" }).catch(async () => q.offer("after the restart", 0, { id: "a" }));
  const end = Date.now() + 20_000;
  while (got.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(got.sort(), ["after the restart", "survives"]);
  await worker.close();
  await q.close();
});

test("a consumer whose takes fail (Postgres refuses connections) backs off instead of retrying in a loop", async () => {
  const errors = [];
  const q = new PostgresDelayQueue({
    pg: "postgres://127.0.0.1:1/none",
    name: "refused",
    commandTimeout: 1000,
    onerror: (e) => errors.push(e),
  });
  assert.equal(await q.take({ timeout: 1500 }), undefined, "the timeout still ends the take");
  await q.close();
  assert.ok(errors.length >= 1, "the failures are reported");
  assert.ok(errors.length <= 15, `${errors.length} failures reported in 1.5 s`);
  for (const e of errors) assert.match(String(e.message), /could not reach Postgres|LISTEN connection/);
});
