// One queue over several hash tags (`shards: K`) on a real Redis Cluster of three masters: the
// K tags on different masters, a producer and three worker processes (every item once, none
// early, each worker's deliveries in deadline order within each shard), the load spread over
// the masters (INFO commandstats), and in this process FIFO ties within a shard, cancel and
// reschedule by id, dead letters, pause across shards, a queue opened with another K, and a
// node's URL given to a client that is no Cluster.
//
// The placement rule is the documented one, computed here on its own: shard i's tag is the
// name plus the shortest suffix ("", "~0", "~1", ...) whose slot is in [i·16384/K,
// (i+1)·16384/K); an id goes to shard CRC16(id) mod K (for `<schedule>@<due>`, the schedule's).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startCluster } from "../../tools/redis-server.mjs";
import { correctnessRun } from "./fleet.mjs";
import { crc16 } from "./crc16.mjs";

const shardOf = (id, k) => crc16(/^([\s\S]+)@-?\d+$/.exec(id)?.[1] ?? id) % k;
/** Ids on shard `i` of K: `${prefix}${n}` for the first n that hash there. */
function idsOn(i, k, count, prefix = "x") {
  const out = [];
  for (let n = 0; out.length < count; n++) if (shardOf(`${prefix}${n}`, k) === i) out.push(`${prefix}${n}`);
  return out;
}

let cluster;
/** @type {Cluster} */
let client;
const queues = [];
let serial = 0;
const open = (opts = {}) => {
  const q = new RedisDelayQueue({ redis: client, name: `shq-${++serial}`, shards: 3, onerror: () => {}, ...opts });
  queues.push(q);
  return q;
};

before(async () => {
  cluster = await startCluster(3);
  client = new Cluster(cluster.seeds, { enableAutoPipelining: true });
});

after(async () => {
  await Promise.all(queues.map((q) => q.close()));
  client?.disconnect();
  await cluster?.stop();
});

/** The port of the master that serves `key`'s slot. */
async function ownerOf(key) {
  const slots = await client.cluster("SLOTS");
  const slot = await client.cluster("KEYSLOT", key);
  return slots.find(([from, to]) => slot >= from && slot <= to)[2][1];
}

/** evalsha + eval calls per master, from INFO commandstats. */
async function scriptCalls() {
  const out = [];
  for (const node of cluster.nodes) {
    const info = await node.cli("info", "commandstats");
    let calls = 0;
    for (const m of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g)) calls += Number(m[2]);
    out.push(calls);
  }
  return out;
}

test("the options: shards 1 to 64, default 1 with the keys under {name}; bad values refused naming shards", () => {
  const one = new RedisDelayQueue({ redis: "redis://127.0.0.1:1", name: "orders", shards: 1 });
  assert.equal(one.keys.items, "tarry:{orders}:items");
  assert.equal(one.keys.shards, undefined);
  one.close();
  for (const [bad, error] of [
    [0, RangeError],
    [65, RangeError],
    [1.5, RangeError],
    ["3", TypeError],
    [null, TypeError],
  ]) {
    assert.throws(
      () => new RedisDelayQueue({ redis: "redis://127.0.0.1:1", name: "orders", shards: bad }),
      (e) => e instanceof error && /options\.shards/.test(e.message),
      `shards: ${String(bad)}`,
    );
  }
  const three = new RedisDelayQueue({ redis: "redis://127.0.0.1:1", name: "orders", shards: 3 });
  assert.ok(three instanceof RedisDelayQueue);
  assert.equal(three.name, "orders");
  assert.deepEqual(
    three.keys.shards.map((k) => k.items),
    ["tarry:{orders}:items", "tarry:{orders~0}:items", "tarry:{orders~1}:items"],
  );
  three.close();
});

test("the K tags land on K different masters (K = 3 on 3 masters)", async () => {
  const q = open({ name: "orders" });
  const ports = await Promise.all(q.keys.shards.map((k) => ownerOf(k.items)));
  assert.equal(new Set(ports).size, 3, `the shards' masters: ${ports.join(", ")}`);
});

test("each shard's tag hashes (by the cluster's own CLUSTER KEYSLOT) into its slot range, for K from 2 to 64", async () => {
  for (const name of ["orders", "é-名前", "a:b"]) {
    for (const k of [2, 3, 4, 7, 16, 64]) {
      const q = new RedisDelayQueue({ redis: client, name, shards: k });
      const tags = q.keys.shards.map((keys) => /\{(.*)\}/.exec(keys.items)[1]);
      assert.equal(new Set(tags).size, k);
      assert.ok(tags.includes(name), "one tag is the name itself");
      for (const [i, tag] of tags.entries()) {
        const slot = await client.cluster("KEYSLOT", `{${tag}}`);
        assert.ok(
          slot >= Math.floor((i * 16384) / k) && slot < Math.floor(((i + 1) * 16384) / k),
          `${tag}: slot ${slot}`,
        );
      }
      await q.close();
    }
  }
});

test("a producer and three workers on one queue over 3 masters: each item once, none early, deadline order within each shard; the load spread", async () => {
  const workers = [];
  const before = await scriptCalls();
  try {
    const name = "spread";
    const figures = await correctnessRun(
      { cluster: cluster.seeds, names: [name], concurrency: 8, shards: 3 },
      3000,
      workers,
      (n, id) => `${n}#${shardOf(id, 3)}`,
    );
    const calls = (await scriptCalls()).map((n, i) => n - before[i]);
    const total = calls.reduce((a, b) => a + b, 0);
    console.log(
      `# shards: ${figures.delivered} delivered; lateness p50 ${figures.p50} ms, p99 ${figures.p99} ms;`,
      `scripts per master ${calls.join(" / ")}`,
    );
    // Items spread by a hash of their id: each master runs about a third of the scripts.
    for (const n of calls) assert.ok(n > total / 6, `scripts per master ${calls.join(" / ")}: not spread`);
  } finally {
    for (const w of workers) w.child.kill("SIGKILL");
  }
});

test("ids go to their shard; FIFO among equal deadlines within a shard; cancel, reschedule, get by id", async () => {
  const q = open();
  const t = Date.now() + 300;
  const ties = idsOn(1, 3, 4, "tie");
  for (const id of ties) await q.offerAt(id, t, { id });
  const others = [...idsOn(0, 3, 2, "o"), ...idsOn(2, 3, 2, "o")];
  await q.offerMany(others.map((id) => ({ id, value: id, deadline: t + 1500 })));
  for (const [i, k] of q.keys.shards.entries()) {
    const want = [...ties, ...others].filter((id) => shardOf(id, 3) === i).sort();
    assert.deepEqual(Object.keys(await client.hgetall(k.items)).sort(), want, `shard ${i} holds its ids`);
  }
  assert.equal(await q.cancel(others[0]), true);
  assert.equal(await q.cancel(others[0]), false);
  assert.equal(await q.reschedule(others[3], 60_000), true);
  assert.equal((await q.get(others[3])).state, "pending");
  assert.ok((await q.delayOf(others[3])) > 50_000);
  const got = [];
  for (let i = 0; i < 5; i++) {
    const job = await q.take({ timeout: 5000 });
    got.push([job.id, job.deadline, Date.now()]);
    await job.ack();
  }
  assert.deepEqual(
    got.slice(0, 4).map(([id]) => id),
    ties,
    "ties within a shard come out in offer order",
  );
  assert.ok([others[1], others[2]].includes(got[4][0]), `then one of the others, not ${got[4][0]}`);
  for (const [id, deadline, at] of got) assert.ok(Math.floor(deadline) <= at, `${id} early`);
  assert.equal(await q.size(), 2);
});

test("dead letters across shards: merged pages in order of death, retryDead and deleteDead by id, purgeDead all", async () => {
  const q = open({ maxAttempts: 1 });
  const ids = [...idsOn(0, 3, 3, "d"), ...idsOn(1, 3, 3, "d"), ...idsOn(2, 3, 3, "d")];
  await q.offerMany(ids.map((id) => ({ id, value: id, delayMs: 0 })));
  let died = 0;
  await new Promise((resolve) => {
    const w = q.process(
      async () => {
        if (++died === ids.length) setTimeout(() => resolve(w.close()), 100);
        throw new Error("always fails");
      },
      { concurrency: 4, retryDelayMs: 0 },
    );
  });
  assert.equal((await q.stats()).dead, ids.length);
  const seen = [];
  let page = await q.deadLetters({ limit: 4 });
  for (;;) {
    seen.push(...page.items);
    if (page.next === undefined) break;
    page = await q.deadLetters({ limit: 4, after: page.next });
  }
  assert.deepEqual(seen.map((d) => d.id).sort(), [...ids].sort(), "every dead letter once over the pages");
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i - 1].diedAt <= seen[i].diedAt, "in order of death");
  assert.match(seen[0].reason, /always fails/);
  assert.equal(await q.retryDead(ids[4]), true);
  assert.equal((await q.get(ids[4])).state, "pending");
  assert.equal(await q.deleteDead(ids[8]), true);
  assert.equal(await q.get(ids[8]), undefined);
  assert.equal(await q.purgeDead(), ids.length - 2);
  assert.equal((await q.stats()).dead, 0);
});

test("pause() stops every shard for every process; resume() delivers what came due", async () => {
  const q = open();
  const other = new RedisDelayQueue({ redis: client, name: q.name, shards: 3, onerror: () => {} });
  queues.push(other);
  const ids = [idsOn(0, 3, 1, "p")[0], idsOn(1, 3, 1, "p")[0], idsOn(2, 3, 1, "p")[0]];
  assert.equal(await q.pause(), true);
  assert.equal(await q.pause(), false);
  await q.offerMany(ids.map((id) => ({ id, value: id, delayMs: 0 })));
  assert.equal(await other.take({ timeout: 400 }), undefined, "nothing handed out while paused");
  assert.equal((await other.stats()).paused, true);
  assert.equal(await q.resume(), true);
  const got = [];
  for (let i = 0; i < 3; i++) {
    const job = await other.take({ timeout: 5000 });
    got.push(job.id);
    await job.ack();
  }
  assert.deepEqual(got.sort(), [...ids].sort());
});

test("a queue opened with another number of shards refuses every call, naming shards, and changes nothing", async () => {
  const q = open();
  await q.offer("kept", 60_000, { id: "a" });
  for (const k of [1, 2, 5]) {
    const wrong = new RedisDelayQueue({ redis: client, name: q.name, shards: k, onerror: () => {} });
    queues.push(wrong);
    await assert.rejects(wrong.offer("lost?", 0, { id: "b" }), (e) => {
      assert.match(e.message, /options\.shards is \d+, but the queue .* was created with shards: 3/);
      return true;
    });
    await assert.rejects(wrong.take({ timeout: 100 }), /shards: 3/);
  }
  assert.equal(await q.size(), 1);
  assert.equal(await q.get("b"), undefined);
  // A queue made with one shard is refused with three.
  const single = new RedisDelayQueue({ redis: client, name: `shq-single-${serial}`, onerror: () => {} });
  queues.push(single);
  await single.offer("one", 60_000, { id: "s" });
  const three = new RedisDelayQueue({ redis: client, name: single.name, shards: 3, onerror: () => {} });
  queues.push(three);
  await assert.rejects(three.size(), /options\.shards is 3, but the queue .* was created with shards: 1/);
  assert.equal(await single.size(), 1);
});

test("events across shards: this process's, and with observe: true every process's; the dashboard reads the merged pages", async () => {
  const q = open();
  const watcher = new RedisDelayQueue({ redis: client, name: q.name, shards: 3, observe: true, onerror: () => {} });
  queues.push(watcher);
  const ids = [idsOn(0, 3, 1, "e")[0], idsOn(1, 3, 1, "e")[0], idsOn(2, 3, 1, "e")[0]];
  const mine = [];
  const seen = [];
  q.addEventListener("acked", (e) => mine.push(e.detail.id));
  watcher.addEventListener("acked", (e) => seen.push(e.detail.id));
  await new Promise((r) => setTimeout(r, 300)); // the observer's stream read has begun
  const { dashboard } = await import("tarry-queue/dashboard");
  const handler = dashboard(q);
  await q.offerMany(ids.map((id, i) => ({ id, value: id, delayMs: 60_000 + 1000 * i })));
  const page = await (await handler(new Request(`http://localhost/api/queues/${q.name}/pending?limit=2`))).json();
  assert.deepEqual(
    page.items.map((i) => i.id),
    ids.slice(0, 2),
  );
  assert.equal(typeof page.next, "string");
  for (const id of ids) await q.reschedule(id, 0);
  for (let i = 0; i < 3; i++) await (await q.take({ timeout: 5000 })).ack();
  const end = Date.now() + 5000;
  while (seen.length < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(mine.sort(), [...ids].sort());
  assert.deepEqual(seen.sort(), [...ids].sort());
});

test("a Cluster node's URL on a client that is no Cluster: the first call rejects at once saying to pass an ioredis Cluster", async () => {
  const node = cluster.nodes[0];
  // A queue whose slot another node owns (MOVED), and a queue over 3 shards (CROSSSLOT when
  // the calls of its shards go in one run, MOVED for the shards elsewhere).
  let name = "elsewhere-0";
  for (let i = 1; (await ownerOf(`{${name}}`)) === node.port; i++) name = `elsewhere-${i}`;
  for (const opts of [{ name }, { name: `three-${serial}`, shards: 3 }]) {
    const q = new RedisDelayQueue({
      redis: `redis://127.0.0.1:${node.port}`,
      commandTimeout: 10_000,
      onerror: () => {},
      ...opts,
    });
    try {
      const started = performance.now();
      const error = await q.offer(1, 60_000).then(
        () => assert.fail(`the offer of ${JSON.stringify(opts)} resolved through one node's URL`),
        (e) => e,
      );
      const ms = performance.now() - started;
      assert.match(error.message, /node of a Redis Cluster.*pass an ioredis Cluster/, JSON.stringify(opts));
      assert.ok(ms < 5000, `${JSON.stringify(opts)}: rejected after ${ms} ms, not at once`);
    } finally {
      await q.close();
    }
  }
});

test("a cold process's first offerMany over 3 shards: deadlines in delayMs order across shards, none before call + delay", async () => {
  const fresh = new Cluster(cluster.seeds, { enableAutoPipelining: true });
  const q = new RedisDelayQueue({ redis: fresh, name: `cold-${++serial}`, shards: 3, onerror: () => {} });
  try {
    // Ids on every shard, in turn, each item 100 ms after the one before.
    const ids = [0, 1, 2].map((i) => idsOn(i, 3, 4, "cold"));
    const items = Array.from({ length: 12 }, (_, n) => ({
      value: n,
      delayMs: 1000 + 100 * n,
      id: ids[n % 3][Math.floor(n / 3)],
    }));
    const calledAt = Date.now();
    await q.offerMany(items);
    const deadlines = [];
    for (const it of items) deadlines.push((await q.get(it.id)).deadline);
    for (let n = 0; n < items.length; n++) {
      assert.ok(deadlines[n] >= calledAt + items[n].delayMs, `item ${n} is due before call + delay`);
      if (n > 0)
        assert.ok(
          deadlines[n] > deadlines[n - 1],
          `item ${n} (shard ${n % 3}) is due before item ${n - 1}: ${deadlines.map((d) => Math.round(d - calledAt)).join(", ")}`,
        );
    }
  } finally {
    await q.close();
    fresh.disconnect();
  }
});
