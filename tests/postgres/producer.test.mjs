// The producer's statements on Postgres: offerMany's set-based path gives exactly what the same
// offers made one at a time give (ifExists against the table and against earlier items of the
// call, FIFO among equal deadlines); a lone offer is one prepared statement, parsed once per
// connection; it notifies the listeners only when its item becomes the head.
import { test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { fresh, privatePostgres } from "./fixture.mjs";

const server = privatePostgres();

/** A queue with an item pending ("p"), one leased ("l") and nothing else. */
async function seeded(T) {
  const q = new PostgresDelayQueue({ pg: server.pool, name: fresh("seed") });
  await q.migrate();
  await q.offerAt("p-old", T + 1000, { id: "p" });
  await q.offer("l-old", 0, { id: "l" });
  const job = await q.take({ timeout: 5000 });
  assert.equal(job?.id, "l");
  return q;
}

/** What a queue holds, in delivery order: the pending items, then the leased ones. */
async function contents(q) {
  const pending = (await q.pending({ limit: 100 })).items.map((i) => [i.id, i.value, i.deadline]);
  const leased = (await q.inFlight({ limit: 100 })).items.map((i) => i.id);
  return { pending, leased };
}

test("offerMany takes effect as the same offers made one at a time: ifExists against the table and earlier items, FIFO among equal deadlines", async () => {
  const T = Date.now() + 3_600_000;
  const items = [
    { value: "n1", deadline: T + 1000, id: "n1" },
    { value: "p-replaced", deadline: T + 1000, id: "p" },
    { value: "n2-kept", deadline: T + 1000, id: "n2", ifExists: "keep" },
    { value: "n1-extended", deadline: T + 500, id: "n1", ifExists: "extend" },
    { value: "l-extended", deadline: T + 1000, id: "l", ifExists: "extend" },
    { value: "n3", deadline: T + 1000, id: "n3" },
    { value: "p-not-kept", deadline: T, id: "p", ifExists: "keep" },
    { value: "n2-replaced", deadline: T + 1000, id: "n2" },
    { value: "n4", deadline: T + 1000, id: "n4", ifExists: "keep" },
    { value: "n5", deadline: T + 2000, id: "n5", ifExists: "extend" },
    { value: "n5-later", deadline: T + 3000, id: "n5", ifExists: "extend" },
  ];
  const many = await seeded(T);
  const one = await seeded(T);
  assert.deepEqual(
    await many.offerMany(items),
    items.map((i) => i.id),
  );
  for (const { value, deadline, id, ifExists } of items) await one.offerAt(value, deadline, { id, ifExists });
  const expected = await contents(one);
  assert.deepEqual(expected.pending, [
    ["n1", "n1-extended", T + 1000],
    ["p", "p-replaced", T + 1000],
    ["l", "l-extended", T + 1000],
    ["n3", "n3", T + 1000],
    ["n2", "n2-replaced", T + 1000],
    ["n4", "n4", T + 1000],
    ["n5", "n5-later", T + 3000],
  ]);
  assert.deepEqual(expected.leased, []);
  assert.deepEqual(await contents(many), expected);
  await many.close();
  await one.close();
});

test("offerMany of 2,500 items, one present: each stored once, in the call's order among equal deadlines, and pending() pages them so", async () => {
  const T = Date.now() + 3_600_000;
  const q = new PostgresDelayQueue({ pg: server.pool, name: fresh("many") });
  await q.migrate();
  await q.offerAt("old", T, { id: "i7" });
  const items = Array.from({ length: 2500 }, (_, i) => ({ value: i, deadline: T, id: `i${i}`, ifExists: "keep" }));
  await q.offerMany(items);
  const seen = [];
  for (let after; ; ) {
    const page = await q.pending({ limit: 1000, after });
    seen.push(...page.items.map((i) => i.value));
    if (!(after = page.next)) break;
  }
  assert.deepEqual(seen, ["old", ...items.filter((_, i) => i !== 7).map((i) => i.value)]);
  await q.close();
});

test("a lone offer is one prepared statement: one query per call, no transaction around it, parsed once per connection", async () => {
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  pool.on("error", () => {});
  /** @type {{ name?: string, text: string }[]} */
  const sent = [];
  pool.on("connect", (client) => {
    const query = client.query.bind(client);
    client.query = (config, ...rest) => {
      sent.push(typeof config === "string" ? { text: config } : config);
      return query(config, ...rest);
    };
  });
  const q = new PostgresDelayQueue({ pg: pool, name: fresh("lone") });
  await q.migrate();
  sent.length = 0;
  for (let i = 0; i < 3; i++) await q.offer(i, 3_600_000);
  await q.cancel("absent");
  await q.reschedule("absent", 10);
  assert.deepEqual(
    sent.map((s) => s.name),
    ["t.tarry.offer", "t.tarry.offer", "t.tarry.offer", "t.tarry.cancel", "t.tarry.reschedule"],
  );
  const { rows } = await pool.query("SELECT name FROM pg_prepared_statements ORDER BY name");
  assert.deepEqual(
    rows.map((r) => r.name),
    ["t.tarry.cancel", "t.tarry.offer", "t.tarry.reschedule"],
    "each prepared once on the pool's one connection",
  );
  await q.close();
  await pool.end();
});

test("a connection taken for transactions many times keeps one error listener of tarry's, not one per transaction", async () => {
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  pool.on("error", () => {});
  const q = new PostgresDelayQueue({ pg: pool, name: fresh("listeners") });
  const big = Array.from({ length: 1001 }, (_, i) => ({ value: i, delayMs: 3_600_000 }));
  for (let i = 0; i < 12; i++) {
    await q.migrate(); // a transaction of its own under an advisory lock
    await q.offerMany(big); // more than one statement's worth: one transaction
    await q.schedule(`s${i}`, { every: 3_600_000 }, i); // a transaction of its own
  }
  const client = await pool.connect();
  // pg.Pool's own listener is off while the client is checked out: what is left is ours.
  const count = client.listenerCount("error");
  client.release();
  assert.ok(count <= 2, `${count} error listeners on the pool's one connection after 36 transactions`);
  assert.equal(await q.size(), 12 * 1001 + 12);
  await q.close();
  await pool.end();
});

test("preparedStatements: false (PgBouncer before 1.21): no statement is prepared, offers and deliveries work; a non-boolean is refused", async () => {
  assert.throws(
    () => new PostgresDelayQueue({ pg: server.pool, name: "x", preparedStatements: "yes" }),
    /options\.preparedStatements must be a boolean, got "yes"/,
  );
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  pool.on("error", () => {});
  const q = new PostgresDelayQueue({ pg: pool, name: fresh("unnamed"), preparedStatements: false });
  await q.migrate();
  await q.offer("a", 0, { id: "a" });
  const job = await q.take({ timeout: 10_000 });
  assert.equal(job?.id, "a");
  assert.equal(await job.ack(), true);
  assert.equal(await q.cancel("absent"), false);
  const { rows } = await pool.query("SELECT name FROM pg_prepared_statements");
  assert.deepEqual(rows, [], "nothing prepared on the pool's one connection");
  await q.close();
  await pool.end();
});

test("an offer notifies the listeners only when its item becomes the head; in a transaction, at the commit", async () => {
  const q = new PostgresDelayQueue({ pg: server.pool, name: fresh("head") });
  await q.migrate();
  const listener = new pg.Client({ connectionString: server.url });
  await listener.connect();
  /** @type {number[]} the heads heard of ('h <deadline> <queue>') */
  const heard = [];
  listener.on("notification", (n) => {
    const [kind, deadline, name] = (n.payload ?? "").split(" ");
    if (kind === "h" && name === q.name) heard.push(Number(deadline));
  });
  await listener.query('LISTEN "tarry.tarry"');
  const next = async (n) => {
    const until = Date.now() + 10_000;
    while (heard.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  };
  const T = Date.now() + 3_600_000;
  await q.offerAt("head", T, { id: "a" });
  await q.offerAt("later", T + 1000, { id: "b" });
  await q.offerMany([{ value: "later too", deadline: T + 2000, id: "c" }]);
  await q.offerAt("earlier", T - 1000, { id: "d" });
  // Notifications of one session come in commit order: had "later" or "later too" notified,
  // it would be heard before the fourth offer's.
  await next(2);
  assert.deepEqual(heard, [T, T - 1000], "the first offer (an empty queue) and the earlier one");
  const client = await server.pool.connect();
  try {
    await client.query("BEGIN");
    await q.offerAt("earliest", T - 2000, { id: "e", client });
    await client.query("COMMIT");
  } finally {
    client.release();
  }
  await next(3);
  assert.deepEqual(heard, [T, T - 1000, T - 2000]);
  await listener.end();
  await q.close();
});
