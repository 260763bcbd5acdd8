// The dashboard and the `tarry-queue` command on Postgres queues, against a private cluster:
// the dashboard's handler over a PostgresDelayQueue (it works over the engine contract), and
// `inspect --postgres` (text and JSON), `dashboard --postgres`, the never-used queue's check
// (it creates nothing), bad arguments, and a password that never reaches the terminal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dashboard } from "tarry-queue/dashboard";
import { PostgresDelayQueue } from "tarry-queue/postgres";
import { assertUnreachableRedacted, run, startDashboard, stopDashboard } from "../engines/cli.mjs";
import { deadPort } from "../engines/dead-port.mjs";
import { fresh, privatePostgres } from "./fixture.mjs";

const HOUR = 3_600_000;
const db = privatePostgres();

/** A queue "orders-…" holding three pending items an hour away, one dead letter and a schedule. */
async function orders() {
  const name = fresh("orders");
  const q = new PostgresDelayQueue({ pg: db.pool, name, maxAttempts: 1 });
  await q.migrate();
  const t = Date.now() + HOUR;
  await q.offerMany([
    { value: { card: "4111" }, deadline: t + 2000, id: "order-2" },
    { value: { card: "5500" }, deadline: t + 1000, id: "order-1" },
    { value: { card: "6011" }, deadline: t + 3000, id: "order-3" },
    { value: "boom", delayMs: 0, id: "order-dead" },
  ]);
  const job = await q.take({ timeout: 5000 });
  await job.nack({ reason: new Error("card declined") });
  await q.schedule("nightly", { cron: "0 2 * * *", timezone: "America/New_York" }, { report: true });
  return { q, name, t };
}

test("the dashboard's handler over a PostgresDelayQueue: queues, stats, pages without values, and a token's retry", async () => {
  const { q, name } = await orders();
  const handler = dashboard({ [name]: q }, { token: "a-long-token" });
  const get = async (path, init) => {
    const r = await handler(new Request(`http://127.0.0.1/${path}`, init));
    return { status: r.status, body: await r.json() };
  };
  assert.deepEqual((await get("api/queues")).body, { queues: [name], write: true, values: false });
  const { body: s } = await get(`api/queues/${name}/stats`);
  assert.deepEqual([s.stats.pending, s.stats.inFlight, s.stats.dead], [4, 0, 1], "three items and the schedule's");
  const pending = await get(`api/queues/${name}/pending`);
  assert.equal(pending.status, 200);
  // The nightly occurrence falls among the orders when 02:00 New York is within the hour.
  const ids = pending.body.items.map((i) => i.id);
  assert.deepEqual(
    ids.filter((id) => id.startsWith("order-")),
    ["order-1", "order-2", "order-3"],
  );
  assert.equal(ids.filter((id) => id.startsWith("nightly@")).length, 1, "the schedule's one occurrence");
  assert.ok(!JSON.stringify(pending.body).includes("4111"), "values hidden");
  const dead = await get(`api/queues/${name}/dead`);
  assert.deepEqual(
    dead.body.items.map((i) => i.id),
    ["order-dead"],
  );
  const retry = (headers) =>
    get(`api/queues/${name}/retry`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ id: "order-dead" }),
    });
  assert.equal((await retry({})).status, 403, "no token, no change");
  assert.equal((await q.get("order-dead")).state, "dead");
  const retried = await retry({ authorization: "Bearer a-long-token" });
  assert.deepEqual([retried.status, retried.body], [200, { done: true }]);
  assert.equal((await q.get("order-dead")).state, "pending");
  await q.close();
});

test("inspect --postgres --json and as text: counts, the next deadlines in order, the dead letters, the schedules, no values", async () => {
  const { q, name, t } = await orders();
  const { stdout } = await run("inspect", "--postgres", db.url, "--name", name, "--json");
  const r = JSON.parse(stdout);
  assert.equal(r.name, name);
  assert.deepEqual(r.counts, { pending: 4, inFlight: 0, dead: 1 });
  // In deadline order, the nightly occurrence wherever 02:00 New York falls.
  const next = r.next.map((i) => [i.id, i.deadline]);
  assert.deepEqual(
    next.filter(([id]) => id.startsWith("order-")),
    [
      ["order-1", t + 1000],
      ["order-2", t + 2000],
      ["order-3", t + 3000],
    ],
  );
  assert.deepEqual(
    next.map(([, deadline]) => deadline),
    next.map(([, deadline]) => deadline).sort((a, b) => a - b),
  );
  assert.equal(next.filter(([id]) => id.startsWith("nightly@")).length, 1, "the schedule's one occurrence");
  assert.deepEqual(
    r.deadLetters.map((d) => d.id),
    ["order-dead"],
  );
  assert.match(r.deadLetters[0].reason, /card declined/);
  assert.deepEqual(
    r.schedules.map((s) => [s.id, s.rule]),
    [["nightly", "cron 0 2 * * * (America/New_York)"]],
  );
  assert.equal(r.all, null, "Postgres keeps each process's figures, not every process's");
  assert.ok(!stdout.includes("4111") && !stdout.includes("report"), "no values in the output");
  const lines = (await run("inspect", "--postgres", db.url, "--name", name)).stdout.split("\n");
  assert.match(lines[0], new RegExp(`^queue ${name} on postgres://\\*\\*\\*@127\\.0\\.0\\.1:\\d+/postgres: running$`));
  assert.match(lines[1], /^ {2}pending 4, in flight 0, dead 1; head due in /);
  assert.equal(lines[3], "next deadlines (4 of 4):");
  await q.close();
});

test("inspect --postgres of a queue never used, or of a schema never migrated: says so, lists the queues there, exits 1, creates nothing", async () => {
  const { q, name } = await orders();
  const never = fresh("never-used");
  await assert.rejects(run("inspect", "--postgres", db.url, "--name", never), (e) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr, new RegExp(`no queue named "${never}" \\(schema "tarry"\\) was ever used on postgres://`));
    assert.match(e.stderr, new RegExp(`the queues there: .*\\b${name}\\b`));
    return true;
  });
  const args = ["inspect", "--postgres", db.url, "--name", name, "--schema", "nothing_here"];
  await assert.rejects(run(...args), (e) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr, /the schema has no tarry-queue tables \(migrate\(\) never ran there\)/);
    return true;
  });
  const { rows } = await db.pool.query(
    "SELECT (SELECT count(*) FROM tarry.items WHERE queue = $1)::int AS items, to_regnamespace('nothing_here') AS schema",
    [never],
  );
  assert.deepEqual(rows[0], { items: 0, schema: null }, "the checks wrote nothing");
  await q.close();
});

test("dashboard --postgres: serves the queues on 127.0.0.1 and prints its address", async (t) => {
  const { q, name } = await orders();
  const started = await startDashboard(t, ["--postgres", db.url, "--name", name, "--token", "a-long-token"]);
  const { line, base } = started;
  assert.match(line, new RegExp(`^tarry dashboard for ${name}: http://127\\.0\\.0\\.1:\\d+/#token=a-long-token$`));
  const info = await (await fetch(`${base}api/queues`)).json();
  assert.deepEqual(info, { queues: [name], write: true, values: false });
  const stats = await (await fetch(`${base}api/queues/${name}/stats`)).json();
  assert.equal(stats.stats.pending, 4);
  await stopDashboard(started);
  await q.close();
});

test("bad arguments with --postgres: a message naming them and exit code 2", async () => {
  const cases = [
    [["--postgres", db.url, "--redis", "redis://127.0.0.1:1"], /--redis is not an option of a Postgres queue/],
    [["--postgres", db.url, "--shards", "3"], /--shards is not an option of a Postgres queue/],
    [["--postgres", "mysql://u:S3cret@127.0.0.1/db"], /^tarry-queue: --postgres, --schema or --name: .*postgres:\/\//],
    [["--postgres", db.url, "--schema", 'bad"schema'], /--schema or --name: .*schema/],
    [["--redis", "redis://127.0.0.1:1", "--schema", "s"], /--schema is an option of a Postgres queue/],
  ];
  for (const [args, message] of cases) {
    await assert.rejects(run("inspect", "--name", "orders", ...args), (e) => {
      assert.equal(e.code, 2, `${args.join(" ")}: ${e.stderr}`);
      assert.match(e.stderr, message);
      assert.ok(!e.stderr.includes("S3cret"), e.stderr);
      return true;
    });
  }
});

test("a Postgres password never reaches the terminal nor a viewer: inspect's output and stderr, the dashboard's 500 and its log", async (t) => {
  const { q, name } = await orders();
  // The private cluster trusts loopback: the password is sent and ignored, and never shown.
  const secret = db.url.replace("postgres://postgres@", "postgres://postgres:S3cret@");
  const { stdout } = await run("inspect", "--postgres", secret, "--name", name);
  assert.ok(!stdout.includes("S3cret"), stdout);
  assert.match(stdout, /on postgres:\/\/postgres:\*\*\*@127\.0\.0\.1/);
  await assertUnreachableRedacted(t, {
    engineArgs: ["--postgres", `postgres://app:S3cret@127.0.0.1:${await deadPort()}/db`],
    name,
    secret: "S3cret",
    shown: /no connection to postgres:\/\/app:\*\*\*@127\.0\.0\.1/,
  });
  await q.close();
});
