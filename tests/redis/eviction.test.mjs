// tarry-queue/redis and what the server may do to its keys: a maxmemory-policy that can evict
// them is reported through onerror once, at the queue's first call (noeviction and volatile-*
// are not); a server that refuses CONFIG GET is said once; and a queue whose sequence counter
// vanished while its items remained is reported, its counter resumed so that order among
// equal deadlines holds.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { RedisDelayQueue } from "tarry-queue/redis";
import { startRedis } from "../../tools/redis-server.mjs";

const servers = [];
const queues = [];
let serial = 0;

after(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await Promise.all(servers.map((s) => s.stop()));
});

async function server(args = []) {
  const s = await startRedis({ args });
  servers.push(s);
  return s;
}

function open(url, opts = {}) {
  const errors = [];
  const q = new RedisDelayQueue({ redis: url, name: `e${++serial}`, onerror: (e) => errors.push(e), ...opts });
  q.errors = errors;
  queues.push(q);
  return q;
}

/** Until `test()` holds, or `ms` passed. */
async function until(test, ms = 3000) {
  const end = Date.now() + ms;
  while (!test() && Date.now() < end) await sleep(10);
}

let lru;
before(async () => {
  lru = await server(["--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"]);
});

test("allkeys-lru: one warning through onerror naming the policy and the fix, whatever the calls", async () => {
  const q = open(lru.url);
  await q.offer({ n: 1 }, 60_000);
  await q.offer({ n: 2 }, 60_000);
  await q.size();
  const twin = open(lru.url, { name: q.keys.items.match(/\{(.*)\}/)[1] });
  const job = twin.take({ timeout: 50 });
  await until(() => q.errors.length > 0 && twin.errors.length > 0);
  assert.equal(await job, undefined);
  for (const errors of [q.errors, twin.errors]) {
    assert.equal(errors.length, 1, errors.map(String).join("\n"));
    assert.match(errors[0].message, /maxmemory-policy is allkeys-lru/);
    assert.match(errors[0].message, /noeviction/);
  }
  // The queue works meanwhile: the warning changes nothing.
  assert.equal(await q.size(), 2);
});

test("a process() worker alone hears of the policy too", async () => {
  const q = open(lru.url);
  const w = q.process(() => {});
  await until(() => q.errors.length > 0);
  await w.close();
  assert.equal(q.errors.length, 1);
  assert.match(q.errors[0].message, /allkeys-lru/);
});

test("noeviction and volatile-lru: no warning", async () => {
  for (const policy of ["noeviction", "volatile-lru"]) {
    const s = await server(["--maxmemory-policy", policy]);
    const q = open(s.url);
    await q.offer(1, 0);
    const job = await q.take();
    await job.ack();
    await sleep(100);
    assert.deepEqual(q.errors, [], policy);
  }
});

test("the policy changed at run time is read by a queue opened afterwards", async () => {
  const s = await server();
  const before = open(s.url);
  await before.size();
  const admin = new Redis(s.url);
  await admin.config("SET", "maxmemory-policy", "allkeys-random");
  admin.disconnect();
  const later = open(s.url);
  await later.size();
  await until(() => later.errors.length > 0);
  assert.deepEqual(before.errors, []);
  assert.match(later.errors[0]?.message ?? "", /allkeys-random/);
});

test("a user who may not run CONFIG: said once, and the queue works", async () => {
  const s = await server();
  const admin = new Redis(s.url);
  await admin.acl("SETUSER", "noconfig", "on", ">secret", "~*", "&*", "+@all", "-config");
  admin.disconnect();
  const q = open(`redis://noconfig:secret@127.0.0.1:${s.port}`);
  await q.offer("x", 0);
  await q.size();
  await until(() => q.errors.length > 0);
  assert.equal(q.errors.length, 1, q.errors.map(String).join("\n"));
  assert.match(q.errors[0].message, /could not read the server's maxmemory-policy/);
  const job = await q.take();
  assert.equal(job.value, "x");
  assert.equal(await job.ack(), true);
  assert.equal(q.errors.length, 1);
});

test("the sequence counter gone while items remain: reported, and equal deadlines stay in offer order", async () => {
  const s = await server();
  const raw = new Redis(s.url);
  const q = open(s.url);
  const [sec] = await raw.time();
  const at = Number(sec) * 1000 + 400;
  // Ids that sort before the first ones: a counter started again would put them first.
  for (const id of ["z1", "z2", "z3"]) await q.offerAt(id, at, { id });
  assert.equal(await raw.del(q.keys.seq), 1);
  for (const id of ["a1", "a2"]) await q.offerAt(id, at, { id });
  await until(() => q.errors.length > 0);
  assert.equal(q.errors.length, 1, q.errors.map(String).join("\n"));
  assert.match(q.errors[0].message, /sequence counter .* was gone while its items remained/);
  const order = [];
  for (let i = 0; i < 5; i++) {
    const job = await q.take();
    order.push(job.id);
    await job.ack();
  }
  assert.deepEqual(order, ["z1", "z2", "z3", "a1", "a2"]);
  // Said once: the counter is back.
  await q.offer("later", 0);
  await sleep(50);
  assert.equal(q.errors.length, 1);
  raw.disconnect();
});

test("a queue emptied by clear() and offered to again is no vanished counter", async () => {
  const s = await server();
  const q = open(s.url);
  await q.offer(1, 60_000);
  await q.clear();
  await q.offer(2, 60_000);
  await q.offer(3, 60_000);
  await sleep(50);
  assert.deepEqual(q.errors, []);
});
