// The `tarry-queue` command on a 3-primary Redis Cluster (--cluster): `inspect` and
// `dashboard` read a queue sharded over the three primaries (`shards: 3`), and the check
// that a queue was ever used looks at every shard and lists the names on every primary.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startCluster } from "../../tools/redis-server.mjs";
import { run, startDashboard, stopDashboard } from "../engines/cli.mjs";

const HOUR = 3_600_000;

let cluster;
let client;
let queue;
let seeds;
let t0;

before(async () => {
  cluster = await startCluster(3);
  seeds = cluster.seeds.map((s) => `${s.host}:${s.port}`).join(",");
  client = new Cluster(cluster.seeds);
  queue = new RedisDelayQueue({ redis: client, name: "spread", shards: 3, maxAttempts: 1 });
  t0 = Date.now() + HOUR;
  await queue.offerMany(
    Array.from({ length: 9 }, (_, i) => ({ id: `o${i}`, value: i, deadline: t0 + 1000 * (9 - i) })),
  );
  await queue.offer("boom", 0, { id: "dies" });
  const job = await queue.take();
  await job.nack({ reason: "refused" });
});

/** `tarry-queue inspect` of the sharded queue across the Cluster. */
const inspectSpread = (...args) => run("inspect", "--cluster", seeds, "--name", "spread", "--shards", "3", ...args);

after(async () => {
  await queue?.close();
  client?.disconnect();
  await cluster?.stop();
});

test("the sharded queue's items are on all three primaries", async () => {
  const owners = new Set();
  for (const keys of queue.keys.shards) {
    const slot = await client.cluster("KEYSLOT", keys.pending);
    const slots = await client.cluster("SLOTS");
    owners.add(slots.find(([from, to]) => slot >= from && slot <= to)[2][1]);
  }
  assert.equal(owners.size, 3);
});

test("inspect --cluster: counts and the next deadlines in order across the shards, the dead letter", async () => {
  const { stdout } = await inspectSpread("--json", "--limit", "4");
  const r = JSON.parse(stdout);
  assert.deepEqual(r.counts, { pending: 9, inFlight: 0, dead: 1 });
  assert.deepEqual(
    r.next.map((i) => i.id),
    ["o8", "o7", "o6", "o5"],
  );
  assert.deepEqual(
    r.deadLetters.map((d) => [d.id, d.reason]),
    [["dies", "refused"]],
  );
  const text = (await inspectSpread()).stdout;
  assert.match(text.split("\n")[0], /^queue spread on the Cluster at 127\.0\.0\.1:\d+,.*: running$/);
});

test("inspect --cluster of a queue never used: exit 1, the names on every primary listed", async () => {
  await assert.rejects(run("inspect", "--cluster", seeds, "--name", "nothing"), (e) => {
    assert.equal(e.code, 1);
    assert.match(e.stderr, /no queue named "nothing" was ever used on the Cluster at/);
    assert.match(e.stderr, /the queues there: spread\n/, "one name for the three shards");
    return true;
  });
  await assert.rejects(
    run("inspect", "--cluster", "127.0.0.1", "--name", "x"),
    (e) => e.code === 2 && /--cluster must be host:port/.test(e.stderr),
  );
  await assert.rejects(
    run("inspect", "--cluster", seeds, "--redis", "redis://127.0.0.1:1", "--name", "x"),
    (e) => e.code === 2 && /not both/.test(e.stderr),
  );
});

test("dashboard --cluster: serves the sharded queue, and a change reaches it", async (t) => {
  const dashboard = await startDashboard(t, [
    "--cluster",
    seeds,
    "--name",
    "spread",
    "--shards",
    "3",
    "--token",
    "cluster-token",
  ]);
  const { base } = dashboard;
  const stats = await (await fetch(`${base}api/queues/spread/stats`)).json();
  assert.deepEqual([stats.stats.pending, stats.stats.dead], [9, 1]);
  const pending = await (await fetch(`${base}api/queues/spread/pending?limit=9`)).json();
  assert.deepEqual(
    pending.items.map((i) => i.id),
    ["o8", "o7", "o6", "o5", "o4", "o3", "o2", "o1", "o0"],
  );
  const retried = await fetch(`${base}api/queues/spread/retry`, {
    method: "POST",
    headers: { authorization: "Bearer cluster-token", "content-type": "application/json" },
    body: JSON.stringify({ id: "dies" }),
  });
  assert.deepEqual(await retried.json(), { done: true });
  assert.equal((await queue.get("dies")).state, "pending");
  await stopDashboard(dashboard);
});
