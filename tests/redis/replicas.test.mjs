// tarry-queue/redis with waitForReplicas: an offer resolves once the replicas asked for have it
// (Redis WAIT); with replication stalled (the replica paused with SIGSTOP) or too few replicas,
// the offer rejects within its timeout saying how many confirmed, and the item is stored on the
// primary. The primary and its replica are private redis-servers started here.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { OfferManyError, RedisDelayQueue, WaitForReplicasError } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";

let primary;
let replica;
let onReplica;
const queues = [];
let serial = 0;

before(async () => {
  primary = await startRedis();
  replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(primary.port)] });
  onReplica = new Redis(replica.url);
  // Until the replica has synced: the primary counts it as connected.
  const until = Date.now() + 15_000;
  while (!/connected_slaves:1/.test(await primary.cli("info", "replication"))) {
    if (Date.now() > until) throw new Error("the replica did not connect within 15 s");
    await sleep(50);
  }
  while (!/master_link_status:up/.test(await replica.cli("info", "replication"))) await sleep(50);
});

after(async () => {
  await replica.kill("SIGCONT");
  await Promise.all(queues.map((q) => q.close()));
  onReplica.disconnect();
  await replica.stop();
  await primary.stop();
});

function open(opts = {}) {
  const errors = [];
  const q = new RedisDelayQueue({ redis: primary.url, name: `w${++serial}`, onerror: (e) => errors.push(e), ...opts });
  q.errors = errors;
  queues.push(q);
  return q;
}

test("an offer that resolves is on the replica already, one call or many at once", async () => {
  const q = open({ waitForReplicas: { count: 1, timeout: 1000 } });
  const id = await q.offer({ n: 1 }, 60_000);
  assert.equal(await onReplica.hexists(q.keys.items, id), 1);
  const ids = await Promise.all(Array.from({ length: 300 }, (_, n) => q.offer({ n }, 60_000)));
  const many = await q.offerMany(Array.from({ length: 700 }, (_, n) => ({ value: n, delayMs: 60_000 })));
  const on = await onReplica.hmget(q.keys.items, ...ids, ...many);
  assert.equal(on.filter((x) => x === null).length, 0, "every resolved offer is on the replica");
  assert.deepEqual(q.errors, []);
});

test("replication stalled: the offer rejects after its timeout, saying 0 of 1 and that the item is stored", async () => {
  const q = open({ waitForReplicas: { count: 1, timeout: 300 } });
  await q.size();
  await replica.kill("SIGSTOP");
  try {
    const started = Date.now();
    const error = await q.offer("stalled", 60_000, { id: "stalled" }).then(
      () => null,
      (e) => e,
    );
    const ms = Date.now() - started;
    assert.ok(error, "the offer resolved with its replica paused");
    assert.ok(error instanceof WaitForReplicasError, `rejected with ${error}`);
    assert.equal(error.name, "WaitForReplicasError");
    assert.match(error.message, /stored on the primary, but 0 of 1 replicas confirmed it within 300 ms/);
    assert.deepEqual([error.acknowledged, error.required], [0, 1]);
    assert.ok(ms >= 250 && ms < 3000, `rejected after ${ms} ms`);
    // The item is there, on the primary: it will be delivered.
    assert.equal(await q.size(), 1);
    // A queue without the option is not held up by it.
    const plain = open({ name: q.keys.items.match(/\{(.*)\}/)[1] });
    await plain.offer("plain", 60_000);
    assert.equal(await plain.size(), 2);
  } finally {
    await replica.kill("SIGCONT");
  }
  // Replication resumed: the next offer is confirmed, and the stalled one reached the replica too.
  await q.offer("after", 60_000, { id: "after" });
  assert.equal(await onReplica.hexists(q.keys.items, "stalled"), 1);
});

test("more replicas asked for than there are: rejects saying 1 of 2", async () => {
  const q = open({ waitForReplicas: { count: 2, timeout: 200 } });
  await assert.rejects(q.offer("x", 1000), (e) => {
    assert.ok(e instanceof WaitForReplicasError, `rejected with ${e}`);
    assert.match(e.message, /1 of 2 replicas confirmed it within 200 ms/);
    assert.deepEqual([e.acknowledged, e.required], [1, 2]);
    return true;
  });
});

test("replication stalled: offerMany rejects with a WaitForReplicasError, or, for a batch of several scripts, an OfferManyError whose cause is one", async () => {
  const q = open({ waitForReplicas: { count: 1, timeout: 300 } });
  await q.size();
  await replica.kill("SIGSTOP");
  try {
    const few = await q.offerMany([1, 2, 3].map((n) => ({ value: n, delayMs: 60_000 }))).then(
      () => null,
      (e) => e,
    );
    assert.ok(few instanceof WaitForReplicasError, `one script's batch rejected with ${few}`);
    assert.deepEqual([few.acknowledged, few.required], [0, 1]);
    const many = await q.offerMany(Array.from({ length: 700 }, (_, n) => ({ value: n, delayMs: 60_000 }))).then(
      () => null,
      (e) => e,
    );
    assert.ok(many instanceof OfferManyError, `a batch of two scripts rejected with ${many}`);
    assert.ok(many.cause instanceof WaitForReplicasError, `its cause is ${many.cause}`);
    assert.equal(many.ids.length, 700);
  } finally {
    await replica.kill("SIGCONT");
  }
  assert.equal(await q.size(), 703, "every item is stored on the primary");
});

test("waitForReplicas.timeout just below commandTimeout (999 with 1000): the offer says 1 of 2 replicas, not no reply", async () => {
  const q = open({ waitForReplicas: { count: 2, timeout: 999 }, commandTimeout: 1000 });
  await q.size();
  // Redis answers WAIT up to a server tick after its timeout: several tries, one after the other.
  for (let n = 0; n < 4; n++) {
    const error = await q.offer(n, 60_000).then(
      () => assert.fail("the offer resolved with one replica of the two asked for"),
      (e) => e,
    );
    assert.match(error.message, /1 of 2 replicas confirmed it within 999 ms/, `try ${n}: ${error.message}`);
  }
  assert.equal(await q.size(), 4, "every offer is stored on the primary");
});

test("bad waitForReplicas: a clear error naming the option", () => {
  const make =
    (waitForReplicas, extra = {}) =>
    () =>
      new RedisDelayQueue({ redis: primary.url, name: "bad", waitForReplicas, ...extra });
  assert.throws(make(1), { name: "TypeError", message: /options.waitForReplicas must be an object/ });
  assert.throws(make({}), { name: "TypeError", message: /options.waitForReplicas.count must be a number/ });
  assert.throws(make({ count: 0 }), {
    name: "RangeError",
    message: /options.waitForReplicas.count must be a whole number >= 1/,
  });
  assert.throws(make({ count: 1.5 }), { name: "RangeError", message: /count must be a whole number/ });
  assert.throws(make({ count: 1, timeout: 0 }), { name: "RangeError", message: /options.waitForReplicas.timeout/ });
  assert.throws(make({ count: 1, timeout: "1" }), { name: "TypeError", message: /options.waitForReplicas.timeout/ });
  assert.throws(make({ count: 1, timeout: 5000 }), {
    name: "RangeError",
    message: /must be less than options.commandTimeout \(5000 ms\)/,
  });
  assert.throws(make({ count: 1, replicas: 1 }), {
    name: "TypeError",
    message: /options.waitForReplicas.replicas is not an option/,
  });
  assert.throws(make({ count: 1 }, { redis: { isCluster: true, evalsha() {}, duplicate() {} } }), {
    name: "TypeError",
    message: /not supported with a Redis Cluster client/,
  });
});
