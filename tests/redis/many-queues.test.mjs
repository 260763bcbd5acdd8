// Thousands of tarry-queue/redis queues in one process: queues opened with the same URL (or
// deep-equal ioredis options) share one client and one subscriber, the last close()
// disconnects them; a client passed in serves any number of queues without a warning and
// stays open after they close. Connections are counted with CLIENT LIST on a private server
// that only this file uses (its own measuring client left out).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";
import { watchHostTimers } from "../host-timers.mjs";

const MANY = 2000;

let server;
let raw;
let serial = 0;
const warnings = [];
const onWarning = (w) => warnings.push(w);

before(async () => {
  server = await startRedis();
  raw = new Redis(server.url);
  await raw.ping();
  process.on("warning", onWarning);
});

after(async () => {
  process.off("warning", onWarning);
  raw.disconnect();
  await server.stop();
});

/** Connections to the server but the measuring one. */
async function connections() {
  const list = await raw.client("LIST");
  return list.split("\n").filter((l) => l.trim()).length - 1;
}

/** Waits until the connections other than the measuring one are `n` (disconnects take a moment to reach the server). */
async function connectionsReach(n) {
  const until = Date.now() + 5000;
  let seen;
  while ((seen = await connections()) !== n && Date.now() < until) await sleep(20);
  return seen;
}

function open(redis, errors, opts = {}) {
  return new RedisDelayQueue({ redis, name: `m${++serial}`, onerror: (e) => errors.push(e), ...opts });
}

/**
 * One item per queue, due `delay` ms later, taken once by a take() waiting on each queue:
 * resolves with what each take saw; asserts each arrived never before it was asked to be due.
 */
async function oneEach(queues, delay) {
  const asked = new Array(queues.length);
  const takes = queues.map((q, i) =>
    q.take().then(async (job) => {
      const arrived = Date.now();
      assert.ok(arrived >= asked[i], `queue ${i}: delivered ${asked[i] - arrived} ms early`);
      assert.equal(job.value, i);
      assert.equal(job.attempt, 1);
      assert.equal(await job.ack(), true);
    }),
  );
  await Promise.all(
    queues.map((q, i) => {
      asked[i] = Date.now() + delay;
      return q.offer(i, delay);
    }),
  );
  await Promise.all(takes);
}

test(`${MANY} queues opened by URL share one client and one subscriber; each delivers its item once, never early; closing them all leaves no connection`, async () => {
  assert.equal(await connectionsReach(0), 0);
  const errors = [];
  const queues = Array.from({ length: MANY }, () => open(server.url, errors));
  await Promise.all(queues.map((q) => q.size()));
  await oneEach(queues, 500);
  const live = await connections();
  assert.ok(live <= 4, `${MANY} queues hold ${live} connections`);
  // Nothing more to deliver: each item went out once and was acknowledged.
  const stats = await Promise.all(queues.map((q) => q.stats()));
  for (const s of stats) {
    assert.equal(s.pending + s.inFlight + s.dead, 0);
    assert.equal(s.delivered, 1);
    assert.equal(s.redelivered, 0);
  }
  await Promise.all(queues.map((q) => q.close()));
  assert.equal(await connectionsReach(0), 0);
  assert.deepEqual(errors, []);
});

test(`a client passed in serves ${MANY} queues without a warning and stays open after they close`, async () => {
  const client = new Redis(server.url);
  await client.ping();
  warnings.length = 0;
  const errors = [];
  const queues = Array.from({ length: MANY }, () => open(client, errors));
  await oneEach(queues, 200);
  assert.ok((await connections()) <= 2);
  await Promise.all(queues.map((q) => q.close()));
  assert.equal(client.status, "ready");
  assert.equal(await client.ping(), "PONG");
  assert.equal(await connectionsReach(1), 1, "the subscriber is closed, the client is not");
  assert.deepEqual(
    warnings.map((w) => `${w.name}: ${w.message}`),
    [],
  );
  assert.deepEqual(errors, []);
  client.disconnect();
  assert.equal(await connectionsReach(0), 0);
});

test("a queue closed while others on the same settings stay open leaves them working; deep-equal options share too", async () => {
  const errors = [];
  const settings = () => ({ host: "127.0.0.1", port: server.port });
  const [a, b, c] = [open(server.url, errors), open(settings(), errors), open(settings(), errors)];
  const d = open(server.url, errors);
  await Promise.all([a, b, c, d].map((q) => q.size()));
  assert.equal(await connections(), 2, "one client per settings: the URL's and the options'");
  await oneEach([a, b, c, d], 50);
  // A take waits on a while b and d close: it still gets its item, c and d's peers still work.
  const waiting = a.take();
  await b.close();
  await d.close();
  await a.offer("after", 50);
  assert.equal((await waiting).value, "after");
  await c.offer("c", 10);
  assert.equal((await c.take()).value, "c");
  await assert.rejects(d.offer("closed", 10), { name: "ClosedError" });
  await a.close();
  await c.close();
  assert.equal(await connectionsReach(0), 0);
  // The same settings once every queue on them closed: a new client.
  const e = open(server.url, errors);
  await oneEach([e], 10);
  assert.equal(await connections(), 2);
  await e.close();
  // A queue closed before its first call reached Redis lets go of the client too.
  const f = open(server.url, errors);
  const sized = f.size();
  await f.close();
  assert.equal(await sized, 0);
  assert.equal(await connectionsReach(0), 0);
  assert.deepEqual(errors, []);
});

test("queues with different connection settings do not share: another commandTimeout, another database", async () => {
  const errors = [];
  const a = open(server.url, errors);
  const b = open(server.url, errors, { commandTimeout: 4000 });
  const c = open(`${server.url}/1`, errors);
  await Promise.all([a, b, c].map((q) => q.offer("x", 10_000)));
  assert.equal(await connections(), 3);
  await Promise.all([a, b, c].map((q) => q.clear()));
  await Promise.all([a, b, c].map((q) => q.close()));
  assert.equal(await connectionsReach(0), 0);
  assert.deepEqual(errors, []);
});

test("one server clock per shared client: the first offers of a thousand queues at once are stamped when they were called", async () => {
  const errors = [];
  const queues = Array.from({ length: 1000 }, () => open(server.url, errors));
  await queues[0].size(); // one queue learns the server's clock
  await sleep(200);
  const asked = new Array(queues.length);
  const stored = [];
  const takes = queues.map((q, i) => q.take().then((job) => ((stored[i] = job.deadline - asked[i]), job.ack())));
  // Every other queue's first call is its offer: all at once, queued behind each other in Redis.
  await Promise.all(
    queues.map((q, i) => {
      asked[i] = Date.now() + 300;
      return q.offer(i, 300);
    }),
  );
  await Promise.all(takes);
  stored.sort((a, b) => a - b);
  assert.ok(stored[0] >= -1, `a deadline stored ${-stored[0]} ms early`);
  // Each queue learning alone, its first offer is counted from when Redis ran it: seconds late here.
  const p50 = stored[Math.floor(stored.length * 0.5)];
  const p99 = stored[Math.floor(stored.length * 0.99)];
  assert.ok(p50 < 50 && p99 < 1000, `deadlines stored later than asked: p50 ${p50} ms, p99 ${p99} ms`);
  await Promise.all(queues.map((q) => q.close()));
  assert.deepEqual(errors, []);
});

test("queues in one process share one host timer: 200 queues waiting on their heads arm as many host timers as one", async () => {
  const errors = [];
  const host = watchHostTimers();
  try {
    /** Host timers armed while `n` queues each wait for an item a minute away. */
    const armedWith = async (n) => {
      const queues = Array.from({ length: n }, () => open(server.url, errors, { safetyInterval: 60_000 }));
      await Promise.all(queues.map((q) => q.offer("far", 60_000)));
      const takes = queues.map((q) => q.take().catch(() => {}));
      await sleep(300);
      const stats = await Promise.all(queues.map((q) => q.stats()));
      for (const s of stats) assert.equal(s.timersArmed, 1, "each queue's own alarm is armed");
      await sleep(100);
      const armed = host.live.size;
      await Promise.all(queues.map((q) => q.close()));
      await Promise.all(takes);
      return armed;
    };
    const one = await armedWith(1);
    const many = await armedWith(200);
    assert.ok(many <= one + 1, `200 waiting queues arm ${many} host timers, one queue ${one}`);
  } finally {
    host.restore();
  }
  assert.deepEqual(errors, []);
});

/** Script runs (EVALSHA and EVAL) since the last call, from INFO commandstats. */
async function scriptRuns() {
  const info = await raw.info("commandstats");
  await raw.config("RESETSTAT");
  let runs = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) runs += Number(m[2]);
  return runs;
}

test("the calls of many queues made in one turn run in few scripts; a queue's failing call fails only itself", async () => {
  const errors = [];
  const queues = Array.from({ length: 200 }, () => open(server.url, errors));
  await Promise.all(queues.map((q) => q.size()));
  await raw.set(queues[7].keys.pending, "a string"); // queue 7's offer fails
  await scriptRuns();
  const offered = await Promise.allSettled(queues.map((q, i) => q.offer(i, 0, { id: "x" })));
  const runs = await scriptRuns();
  assert.ok(runs <= 10, `200 offers in one turn took ${runs} script runs`);
  for (const [i, r] of offered.entries()) {
    if (i === 7) assert.match(String(r.reason?.message), /a key of this queue holds another type of value/);
    else assert.equal(r.status, "fulfilled", `queue ${i}: ${r.reason}`);
  }
  await raw.del(queues[7].keys.pending);
  const sizes = await Promise.all(queues.map((q) => q.size()));
  assert.deepEqual(
    sizes,
    queues.map((_, i) => (i === 7 ? 0 : 1)),
  );
  await Promise.all(queues.map((q) => q.close()));
  assert.deepEqual(errors, []);
});

test("takes of many queues due together, gathered: each queue's order, its pause and its leases kept, never early", async () => {
  const errors = [];
  const n = 60;
  const queues = Array.from({ length: n }, () => open(server.url, errors, { visibilityTimeout: 60_000 }));
  await Promise.all(queues.map((q) => q.size()));
  await queues[3].pause();
  // Per queue: c, a, b offered in one call each turn; due a < b < c, a and b at the same deadline (FIFO).
  const asked = Date.now();
  await Promise.all(
    queues.flatMap((q) => [
      q.offer("c", 400, { id: "c" }),
      q.offer("a", 300, { id: "a" }),
      q.offer("b", 300, { id: "b" }),
    ]),
  );
  // One item of queue 5 already leased elsewhere: the take must not hand it out again.
  const other = open(server.url, errors, { name: queues[5].name, visibilityTimeout: 60_000 });
  await queues[5].offer("held", 0, { id: "held" });
  const held = await other.take();
  assert.equal(held.id, "held");
  await scriptRuns();
  const got = await Promise.all(
    queues.map(async (q, i) => {
      if (i === 3) return [];
      const out = [];
      for (let k = 0; k < 3; k++) {
        const job = await q.take();
        assert.ok(Date.now() >= asked + (job.id === "c" ? 400 : 300), `queue ${i}: ${job.id} came early`);
        out.push(job.id);
        await job.ack();
      }
      return out;
    }),
  );
  const runs = await scriptRuns();
  for (const [i, ids] of got.entries()) assert.deepEqual(ids, i === 3 ? [] : ["a", "b", "c"], `queue ${i}`);
  assert.ok(runs < (n - 1) * 3, `${(n - 1) * 3} takes and acks over ${n - 1} queues took ${runs} script runs`);
  // The paused queue kept its items; the leased one stayed leased.
  assert.equal(await queues[3].size(), 3);
  assert.equal((await queues[5].stats()).inFlight, 1);
  assert.equal(await held.ack(), true);
  await other.close();
  await Promise.all(queues.map((q) => q.close()));
  assert.deepEqual(errors, []);
});

test("a batch of many queues' calls that meets a server without the scripts (SCRIPT FLUSH) is sent again, in order", async () => {
  const errors = [];
  const queues = Array.from({ length: 100 }, () => open(server.url, errors));
  await Promise.all(queues.map((q) => q.size()));
  await raw.script("FLUSH");
  const offered = queues.flatMap((q, i) => [q.offer(`${i}-1`, 0, { id: "1" }), q.offer(`${i}-2`, 0, { id: "2" })]);
  await Promise.all(offered);
  for (const [i, q] of queues.entries()) {
    const first = await q.take();
    const second = await q.take();
    assert.deepEqual([first.value, second.value], [`${i}-1`, `${i}-2`]);
    await first.ack();
    await second.ack();
  }
  await Promise.all(queues.map((q) => q.close()));
  assert.deepEqual(errors, []);
});
