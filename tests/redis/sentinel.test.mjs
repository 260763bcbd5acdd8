// tarry-queue/redis through Redis Sentinel: a primary, its replicas and one Sentinel, private
// servers started here on free loopback ports (Sentinel takes the primary for down after
// 500 ms). The queues connect with ioredis' `{ sentinels, name }` options. kill -9 of the
// primary while a producer offers with waitForReplicas and a worker consumes: Sentinel
// promotes a replica, the queues find it on their own, every offer that resolved is
// delivered, none early, and every call settles within its commandTimeout. Then the case the
// option exists for: replication held back (the replica's link to the primary runs through a
// proxy that stops forwarding), the primary killed, the replica promoted: offers that resolved
// without waitForReplicas are gone, while with it no offer resolved that the replica lacked.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis, startSentinel } from "../../tools/redis-server.mjs";

const COMMAND_TIMEOUT = 3000;
const stoppers = [];
after(async () => {
  for (const stop of stoppers.reverse()) await stop();
});

/** Resolves once `check()` is true, or throws saying `what` after `ms`. */
async function until(check, what, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`);
    await sleep(50);
  }
}

/**
 * A primary, `replicas` replicas of it (the first through `via(port)`: the port it should
 * replicate from) and a Sentinel that knows them all.
 */
async function topology({ replicas: count = 1, via = async (port) => port } = {}) {
  const primary = await startRedis();
  stoppers.push(() => primary.stop());
  const replicas = [];
  for (let i = 0; i < count; i++) {
    const upstream = i === 0 ? await via(primary.port) : primary.port;
    const replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(upstream)] });
    stoppers.push(() => replica.stop());
    replicas.push(replica);
  }
  for (const replica of replicas)
    await until(async () => /master_link_status:up/.test(await replica.cli("info", "replication")), "a replica's sync");
  const sentinel = await startSentinel(primary);
  stoppers.push(() => sentinel.stop());
  // A Sentinel can promote only a replica it has found (in the primary's INFO).
  await until(async () => {
    const known = await sentinel.cli("sentinel", "replicas", sentinel.name);
    return replicas.every((r) => known.includes(String(r.port)));
  }, "Sentinel finding the replicas");
  return { primary, replicas, replica: replicas[0], sentinel };
}

function open(sentinel, name, opts = {}) {
  const errors = [];
  const q = new RedisDelayQueue({
    // A connection name of its own per role: the producer and the worker do not share a client.
    redis: { sentinels: sentinel.sentinels, name: sentinel.name, connectionName: opts.role ?? "queue" },
    name,
    commandTimeout: COMMAND_TIMEOUT,
    onerror: (e) => errors.push(e),
    ...Object.fromEntries(Object.entries(opts).filter(([k]) => k !== "role")),
  });
  q.errors = errors;
  stoppers.push(() => q.close());
  return q;
}

test("kill -9 of the primary: Sentinel promotes a replica; with waitForReplicas every resolved offer is delivered, none early, no call hangs", async () => {
  const { primary, replicas, sentinel } = await topology({ replicas: 2 });
  const producer = open(sentinel, "failover", { role: "producer", waitForReplicas: { count: 1, timeout: 500 } });
  const worker = open(sentinel, "failover", { role: "worker", visibilityTimeout: 2000, safetyInterval: 1000 });
  const arrived = new Map(); // id -> first arrival (local ms)
  const handle = worker.process(
    async (_value, job) => {
      if (!arrived.has(job.id)) arrived.set(job.id, Date.now());
    },
    { concurrency: 8 },
  );

  const resolved = new Map(); // id -> not before (local ms)
  const rejections = [];
  const starts = []; // when each offer was called (local ms)
  const slowest = { ms: 0 };
  let killedAt = Infinity;
  let stop = false;
  let n = 0;
  const offerOne = async () => {
    const id = `i${n++}`;
    const delayMs = 200 + (n % 7) * 50;
    const at = Date.now();
    starts.push(at);
    try {
      await producer.offer({ id }, delayMs, { id });
      resolved.set(id, at + delayMs);
    } catch (e) {
      rejections.push({ at, message: String(e.message) });
      await sleep(20);
    }
    slowest.ms = Math.max(slowest.ms, Date.now() - at);
  };
  // Four callers awaiting one offer after another, and one more offer every 100 ms whatever
  // the others wait for (so that calls are made while no primary answers).
  const lanes = Array.from({ length: 4 }, async () => {
    while (!stop) await offerOne();
  });
  const ticks = [];
  const ticker = setInterval(() => ticks.push(offerOne()), 100);
  await until(() => resolved.size >= 200 && arrived.size >= 50, "200 offers resolving and 50 delivered");
  await primary.kill("SIGKILL");
  killedAt = Date.now();
  const ports = replicas.map((r) => r.port);
  await until(async () => ports.includes(await sentinel.primaryPort()), "the failover", 20_000);
  const promotedAt = Date.now();
  const promoted = promotedAt - killedAt;
  // Offers go on against the promoted replica; Sentinel points the other replica at it, and
  // until that one has synced, offers wait for a confirmation that does not come and reject
  // saying so.
  const resolvedBefore = resolved.size;
  await until(() => resolved.size > resolvedBefore + 50, "offers resolving after the failover", 20_000);
  const rejoined = Date.now() - killedAt;
  stop = true;
  clearInterval(ticker);
  await Promise.all([...lanes, ...ticks]);

  const lastDue = Math.max(...resolved.values());
  await until(
    () => [...resolved.keys()].every((id) => arrived.has(id)),
    "every resolved offer's delivery",
    Math.max(0, lastDue - Date.now()) + 15_000,
  ).catch((e) => {
    const lost = [...resolved.keys()].filter((id) => !arrived.has(id));
    throw new Error(
      `${lost.length} of ${resolved.size} resolved offers never delivered (${lost.slice(0, 5)}): ${e.message}`,
    );
  });
  const drained = Date.now() - killedAt;
  // The worker's subscriber (a duplicate of its client, so it asks Sentinel too) follows the
  // failover: an offer to the emptied queue on the new primary reaches it as a head message.
  await until(async () => (await worker.stats()).pending + (await worker.stats()).inFlight === 0, "the queue emptying");
  const messages = (await worker.stats()).messages;
  const last = Date.now();
  // Sentinel may reconfigure the other replica again (at failover-timeout) and so hold back
  // its confirmations a while: a rejection for that still stored the item on the primary.
  await producer.offer("last", 300, { id: "last" }).catch((e) => {
    if (!/replicas confirmed it within/.test(e.message)) throw e;
  });
  await until(() => arrived.has("last"), "the last offer's delivery");
  assert.ok(arrived.get("last") >= last + 300, "the last offer came out early");
  assert.ok((await worker.stats()).messages > messages, "the offer's head message did not reach the worker");
  for (const [id, notBefore] of resolved) {
    const at = arrived.get(id);
    assert.ok(at >= notBefore, `${id} came out ${notBefore - at} ms early`);
  }
  assert.ok(slowest.ms <= COMMAND_TIMEOUT + 1000, `a call took ${slowest.ms} ms (commandTimeout ${COMMAND_TIMEOUT})`);
  const during = rejections.filter((r) => r.at >= killedAt - COMMAND_TIMEOUT);
  assert.equal(during.length, rejections.length, "no offer rejected before the primary was killed");
  for (const r of rejections)
    assert.match(
      r.message,
      /replicas confirmed it within|no connection to Redis|no reply from Redis|closed before the reply|READONLY/,
      `a call during the failover rejected with ${r.message}`,
    );
  const duringFailover = starts.filter((at) => at >= killedAt && at <= promotedAt).length;
  assert.ok(duringFailover > 0, "no offer was called between the kill and the promotion");
  console.log(
    `# Sentinel promoted a replica ${promoted} ms after kill -9, offers resolving again ${rejoined} ms after; ${resolved.size} offers resolved, all delivered; ${duringFailover} called between the kill and the promotion, ${rejections.length} rejected; slowest call ${slowest.ms} ms; all delivered ${drained} ms after the kill`,
  );
  await handle.close();
});

/**
 * A TCP proxy to `port` that forwards both ways until hold() (then it keeps what it gets
 * and forwards nothing), and cut() closes every connection through it.
 */
async function proxy(port) {
  const sockets = new Set();
  let held = false;
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(from);
      from.on("data", (d) => {
        if (!held) to.write(d);
      });
      from.on("error", () => {});
      from.on("close", () => to.destroy());
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  stoppers.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    port: server.address().port,
    hold() {
      held = true;
    },
    cut() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

test("replication held back when the primary dies: resolved offers are lost without waitForReplicas, none with it", async () => {
  let link;
  const { primary, replica, sentinel } = await topology({
    via: async (port) => {
      link = await proxy(port);
      return link.port;
    },
  });
  const plain = open(sentinel, "plain", { role: "plain" });
  const waited = open(sentinel, "waited", { role: "waited", waitForReplicas: { count: 1, timeout: 300 } });
  await plain.offer("before", 60_000, { id: "before" });
  await waited.offer("before", 60_000, { id: "before" });

  link.hold(); // the primary's writes stop reaching the replica
  const plainResolved = await plain.offerMany(Array.from({ length: 50 }, (_, n) => ({ value: n, delayMs: 60_000 })));
  const waitedResolved = [];
  const waitedErrors = [];
  for (let n = 0; n < 5; n++)
    await waited.offer(n, 60_000, { id: `w${n}` }).then(
      (id) => waitedResolved.push(id),
      (e) => waitedErrors.push(e),
    );
  await primary.kill("SIGKILL");
  link.cut();
  await until(async () => (await sentinel.primaryPort()) === replica.port, "the failover", 20_000);

  // Both queues reconnect to the promoted replica on their own.
  const plainThere = await Promise.all(plainResolved.map((id) => plain.get(id)));
  const lost = plainThere.filter((x) => x === undefined).length;
  assert.equal(lost, 50, "without waitForReplicas, the 50 offers that resolved while replication was held are lost");
  assert.notEqual(await plain.get("before"), undefined, "what had replicated survived");
  assert.deepEqual(waitedResolved, [], "with waitForReplicas, no offer resolved that the replica did not have");
  assert.equal(waitedErrors.length, 5);
  for (const e of waitedErrors) assert.match(e.message, /0 of 1 replicas confirmed it within 300 ms/);
  assert.notEqual(await waited.get("before"), undefined);
  console.log(
    `# replication held, primary killed: ${lost} of ${plainResolved.length} resolved offers lost without waitForReplicas; with it 0 resolved, ${waitedErrors.length} rejected`,
  );
});
