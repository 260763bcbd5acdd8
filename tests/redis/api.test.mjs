// tarry-queue/redis as a user imports it, against a real Redis (a private redis-server on a
// free loopback port, stopped after). Order, "never early" and "nothing lost" are asserted
// exactly; lateness only with wide margins.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisDelayQueue } from "tarry-queue/redis";
import { privateRedis } from "./fixture.mjs";
import { luaDir, sourceOf } from "../../scripts/lua.mjs";

const fx = privateRedis("q");
const open = fx.open;

/** A second handle on the same queue, as another process would have. */
function twin(q, opts = {}) {
  const name = q.keys.items.match(/\{(.*)\}/)[1];
  return open({ name, ...opts });
}

test("take() hands out items in deadline order, equal deadlines FIFO, never before call + delay", async () => {
  const q = open();
  const t = Date.now();
  const calls = [];
  for (const [v, d] of [
    ["c", 60],
    ["a", 20],
    ["b", 40],
  ])
    calls.push([v, Date.now(), d, q.offer(v, d, { id: v })]);
  await Promise.all(calls.map((c) => c[3]));
  const got = [];
  for (let i = 0; i < 3; i++) {
    const job = await q.take();
    const now = Date.now();
    const [, at, d] = calls.find((c) => c[0] === job.value);
    assert.ok(now >= at + d, `${job.value} came out ${at + d - now} ms early`);
    assert.ok(Math.floor(job.deadline) <= now, "handed out before its deadline by the server's clock");
    assert.equal(job.attempt, 1);
    assert.equal(await job.ack(), true);
    got.push(job.value);
  }
  assert.deepEqual(got, ["a", "b", "c"]);
  assert.ok(Date.now() - t < 5000, "wide margin on lateness");

  // 300 items at one deadline (already past), offered in three calls: FIFO.
  const deadline = Date.now() - 1000;
  const values = Array.from({ length: 300 }, (_, i) => i);
  await q.offerMany(values.slice(0, 100).map((value) => ({ value, deadline })));
  for (const value of values.slice(100, 200)) await q.offerAt(value, new Date(deadline));
  await q.offerMany(values.slice(200).map((value) => ({ value, deadline })));
  const order = [];
  for (let i = 0; i < 300; i++) {
    const job = await q.take();
    order.push(job.value);
    await job.ack();
  }
  assert.deepEqual(order, values);
});

test("offers made in one turn share script runs (500 each) and keep call order; each call gets its own ids", async () => {
  const q = open();
  const deadline = Date.now() - 1000; // all due, at one deadline: they must come out in call order
  const calls = [];
  for (let i = 0; i < 700; i++) calls.push(q.offerAt(i, deadline, { id: `a${i}` }));
  calls.push(q.offerMany(Array.from({ length: 600 }, (_, i) => ({ value: 700 + i, deadline, id: `b${i}` }))));
  for (let i = 0; i < 300; i++) calls.push(q.offerAt(1300 + i, deadline));
  const ids = await Promise.all(calls);
  assert.deepEqual(ids.slice(0, 3), ["a0", "a1", "a2"]);
  assert.deepEqual(ids[700].slice(0, 2), ["b0", "b1"]);
  assert.equal(ids[700].length, 600);
  assert.equal(new Set(ids.flat()).size, 1600);
  assert.equal(await q.size(), 1600);
  const order = [];
  for (let i = 0; i < 1600; i++) {
    const job = await q.take();
    order.push(job.value);
    await job.ack();
  }
  assert.deepEqual(
    order,
    Array.from({ length: 1600 }, (_, i) => i),
  );

  // Calls reach Redis in the order they were made: a cancel does not overtake the offers
  // gathered before it in the same turn.
  const [, , cancelled] = await Promise.all([
    q.offer(1, 60_000, { id: "x" }),
    q.offer(2, 60_000, { id: "y" }),
    q.cancel("y"),
  ]);
  assert.equal(cancelled, true);
  assert.equal(await q.size(), 1);
  await q.clear();
});

test("ids: re-offering replaces, cancel/reschedule/delayOf by id, generated ids are unique", async () => {
  const q = open();
  assert.equal(await q.offer({ v: 1 }, 60_000, { id: "order-42" }), "order-42");
  assert.equal(await q.offer({ v: 2 }, 30_000, { id: "order-42" }), "order-42");
  assert.equal(await q.size(), 1);
  const left = await q.delayOf("order-42");
  assert.ok(left > 29_000 && left <= 30_000, `delayOf after the replacing offer: ${left}`);
  assert.equal(await q.reschedule("order-42", 10), true);
  assert.ok((await q.delayOf("order-42")) <= 10);
  const job = await q.take();
  assert.deepEqual([job.id, job.value], ["order-42", { v: 2 }]);
  // In flight: not pending, so cancel, reschedule and delayOf leave it alone.
  assert.equal(await q.cancel("order-42"), false);
  assert.equal(await q.reschedule("order-42", 5), false);
  assert.equal(await q.delayOf("order-42"), undefined);
  assert.equal(await job.ack(), true);

  assert.equal(await q.offer("x", 60_000, { id: "gone" }), "gone");
  assert.equal(await q.cancel("gone"), true);
  assert.equal(await q.cancel("gone"), false);
  assert.equal(await q.reschedule("never", 5), false);
  assert.equal(await q.delayOf("never"), undefined);

  const ids = await q.offerMany(Array.from({ length: 50 }, (_, i) => ({ value: i, delayMs: 60_000 })));
  assert.equal(new Set(ids).size, 50);
  assert.equal(await q.size(), 50);
  await q.clear();
  assert.equal(await q.size(), 0);
});

test("records are compact (generated ids of 22 characters, the seq without leading zeros), and records written with all 16 digits of the seq still read", async () => {
  const q = open();
  const id = await q.offer({ v: 1 }, 60_000);
  assert.match(id, /^[A-Za-z0-9_-]{22}$/);
  const record = await fx.raw.hget(q.keys.items, id);
  assert.match(record, /^p[1-9a-f][0-9a-f]{0,15}\|/, `the record ${record}`);
  const [member] = await fx.raw.zrange(q.keys.pending, 0, -1);
  assert.equal(member.length, 16 + 22);
  // The earlier layout: the seq with its leading zeros, a UUID for id.
  const old = "6f1c2a5e-3b9d-4c1e-9a7f-0d2b8e4c6a10";
  const seq = member.slice(0, 16).replace(/^0+/, "").padStart(1, "0");
  const next = (BigInt(`0x${seq}`) + 1n).toString(16).padStart(16, "0");
  const deadline = Date.now() - 1;
  await fx.raw.hset(q.keys.items, old, `p${next}|${deadline}|0||{"old":true}`);
  await fx.raw.zadd(q.keys.pending, deadline, `${next}${old}`);
  await fx.raw.incr(q.keys.seq);
  assert.equal((await q.get(old)).state, "pending");
  assert.equal(await q.reschedule(old, 0), true);
  const job = await q.take({ timeout: 2000 });
  assert.deepEqual([job.id, job.value], [old, { old: true }]);
  assert.equal(await job.ack(), true);
  assert.equal(await q.get(old), undefined);
  assert.equal(await q.size(), 1);
});

test("bad input: a clear error naming the argument, and nothing changes", async () => {
  const q = open();
  const rejects = async (p, kind, re) => assert.rejects(p, (e) => e instanceof kind && re.test(e.message));
  await rejects(q.offer(undefined, 5), TypeError, /^value is undefined/);
  await rejects(
    q.offer(() => 1, 5),
    TypeError,
    /^value is a function/,
  );
  await rejects(q.offer({ a: { b: [1, 2n] } }, 5), TypeError, /^value\.a\.b\[1\] is a bigint/);
  await rejects(q.offer({ when: new Date() }, 5), TypeError, /^value\.when is a Date/);
  await rejects(q.offer(new Map(), 5), TypeError, /^value is a Map/);
  await rejects(q.offer({ x: Number.NaN }, 5), TypeError, /^value\.x is NaN/);
  await rejects(q.offer({ "a b": undefined }, 5), TypeError, /^value\["a b"\] is undefined/);
  const sparse = [1, 2, 3];
  delete sparse[1];
  await rejects(q.offer(sparse, 5), TypeError, /^value\[1\] is a hole/);
  const cycle = { n: 1 };
  cycle.self = cycle;
  await rejects(q.offer(cycle, 5), TypeError, /^value\.self refers back to itself/);
  await rejects(q.offer(1, "5"), TypeError, /^delayMs must be a number/);
  await rejects(q.offer(1, Number.POSITIVE_INFINITY), RangeError, /^delayMs must be a finite/);
  await rejects(q.offer(1, 1e300), RangeError, /^delayMs must put the deadline within a Date's range/);
  await rejects(q.offer(1, 8.64e15), RangeError, /^delayMs must put the deadline within a Date's range/);
  await rejects(q.offerAt(1, 8.64e15 + 1), RangeError, /^deadline must be within a Date's range/);
  await rejects(q.offerMany([{ value: 1, delayMs: 8.64e15 }]), RangeError, /^items\[0\]\.delayMs must put/);
  await rejects(q.offer(1, 5, { id: "" }), RangeError, /^options\.id must not be empty/);
  await rejects(q.offer(1, 5, { id: 42 }), TypeError, /^options\.id must be a string/);
  await rejects(q.offer(1, 5, { id: "x".repeat(513) }), RangeError, /^options\.id must be at most 512/);
  await rejects(q.offer(1, 5, { id: "a\uD800" }), RangeError, /^options\.id must be well-formed/);
  await rejects(q.offerAt(1, new Date(Number.NaN)), RangeError, /^deadline must be a finite time/);
  await rejects(q.offerAt(1, "tomorrow"), TypeError, /^deadline must be a number of epoch/);
  await rejects(q.offerMany("no"), TypeError, /^items must be an array/);
  await rejects(q.offerMany([{ value: 1, delayMs: 5 }, { value: 1 }]), TypeError, /^items\[1\] must have exactly one/);
  await rejects(
    q.offerMany([
      { value: 1, delayMs: 5 },
      { value: { f: Symbol() }, delayMs: 5 },
    ]),
    TypeError,
    /^items\[1\]\.value\.f is a symbol/,
  );
  await rejects(q.offerMany([{ value: 1, delayMs: 5, id: 7 }]), TypeError, /^items\[0\]\.id must be a string/);
  await rejects(q.cancel(""), RangeError, /^id must not be empty/);
  await rejects(q.reschedule("a", "1"), TypeError, /^delayMs must be a number/);
  await rejects(q.delayOf(null), TypeError, /^id must be a string/);
  assert.equal(await q.size(), 0, "a refused call changed the queue");
  await rejects(q.take({ timeout: "1" }), TypeError, /^options\.timeout must be a number/);
  await rejects(q.take({ timeout: -5 }), RangeError, /^options\.timeout must not be negative/);
  await rejects(q.take({ signal: {} }), TypeError, /^options\.signal must be an AbortSignal/);
  await rejects(
    q.take({ timout: 5 }),
    TypeError,
    /^options\.timout is not an option of take\(\); did you mean timeout\?/,
  );
  assert.throws(() => q.process("no"), /^TypeError: handler must be a function/);
  assert.throws(() => q.process(() => {}, { concurrency: 0 }), /^RangeError: options\.concurrency/);
  assert.throws(() => new RedisDelayQueue({}), /^TypeError: options\.name must be a non-empty string/);
  assert.throws(() => new RedisDelayQueue({ name: "a{b}" }), /^RangeError: options\.name must not contain/);
  assert.throws(
    () => new RedisDelayQueue({ name: "a", visibilityTimeout: 0 }),
    /options\.visibilityTimeout must be positive/,
  );
  assert.throws(() => new RedisDelayQueue({ name: "a", maxAttempts: 1.5 }), /options\.maxAttempts must be a whole/);
  assert.throws(() => new RedisDelayQueue({ name: "a", redis: 5 }), /options\.redis must be/);
  assert.throws(
    () => new RedisDelayQueue({ name: "a", visibilityTimout: 5 }),
    /^TypeError: options\.visibilityTimout is not an option of new RedisDelayQueue\(\); did you mean visibilityTimeout\?/,
  );
  assert.throws(
    () => new RedisDelayQueue({ name: "a", prefix: null }),
    /^TypeError: options\.prefix must be a string, got null/,
  );
  assert.throws(
    () => q.process(() => {}, { concurrency: 1, retryDelay: 5 }),
    /^TypeError: options\.retryDelay is not an option of process\(\)/,
  );
});

test("a value nested 10^4 or 10^5 deep is refused with a TypeError naming the path, not a stack overflow", async () => {
  const q = open();
  const nest = (n, leaf, wrap) => {
    let v = leaf;
    for (let i = 0; i < n; i++) v = wrap(v);
    return v;
  };
  for (const n of [10_000, 100_000]) {
    for (const [what, wrap, path] of [
      ["objects", (v) => ({ d: v }), /^value(\.d)+/],
      ["arrays", (v) => [v], /^value(\[0\])+/],
    ]) {
      const e = await q.offer(nest(n, 1, wrap), 5).catch((err) => err);
      assert.ok(e instanceof TypeError, `${n} ${what}: ${e}`);
      assert.match(e.message, path);
      assert.match(e.message, /nested more than 1000 levels deep/);
    }
  }
  // As deep as JSON.stringify writes for sure: accepted, and delivered as offered.
  const deep = nest(999, "leaf", (v) => ({ d: v }));
  await q.offer(deep, 0, { id: "deep" });
  const job = await q.take();
  assert.deepEqual(job.value, deep);
  await job.ack();
  assert.equal(await q.size(), 0, "a refused offer changed the queue");
});

test("what JSON would change is refused, naming the path: an array's toJSON, an Array subclass, a named property, a getter that changes", async () => {
  const q = open();
  const withToJSON = Object.assign([1, 2], { toJSON: () => "something else" });
  class Orders extends Array {}
  const named = Object.assign([1, 2], { total: 3 });
  let reads = 0;
  const changing = {
    get n() {
      return reads++;
    },
  };
  for (const [value, message] of [
    [withToJSON, /^value is an array with a property "toJSON"/],
    [{ list: [1, { a: withToJSON }] }, /^value\.list\[1\]\.a is an array with a property "toJSON"/],
    [Orders.from([1, 2]), /^value is an array of another class \(Orders\)/],
    [named, /^value is an array with a property "total" that JSON leaves out/],
    [changing, /^value\.n changed while it was read/],
  ]) {
    await assert.rejects(q.offer(value, 0), (e) => e instanceof TypeError && message.test(e.message));
  }
  assert.equal(await q.size(), 0, "a refused offer changed the queue");
});

test("one unreadable reason (a :reasons entry that is not JSON) leaves every dead letter listed", async () => {
  const q = open({ maxAttempts: 1 });
  await q.offer("a", 0, { id: "a" });
  await q.offer("b", 0, { id: "b" });
  for (let i = 0; i < 2; i++) await (await q.take()).nack({ reason: "failed" });
  await fx.raw.hset(q.keys.reasons, "a", "{not json");
  const { items } = await q.deadLetters();
  assert.deepEqual(
    items.map((d) => [d.id, d.value, d.reason]),
    [
      ["a", "a", "{not json"],
      ["b", "b", "failed"],
    ],
  );
});

test("queue names and prefixes with lone surrogates are refused: Redis would give them one set of keys", () => {
  for (const name of ["jobs\uD800", "jobs\uDBFF", "\uDC00jobs"]) {
    assert.throws(
      () => new RedisDelayQueue({ name }),
      (e) => e instanceof RangeError && /^options\.name must be well-formed Unicode/.test(e.message),
    );
  }
  assert.throws(
    () => new RedisDelayQueue({ name: "jobs", prefix: "t\uD800:" }),
    /^RangeError: options\.prefix must be well-formed/,
  );
  // U+FFFD itself is a character like any other.
  const q = open({ name: "jobs\uFFFD" });
  assert.match(q.keys.items, /\{jobs\uFFFD\}/);
});

test("a take that times out or is aborted leaves its item in the queue", async () => {
  const q = open();
  await q.offer("later", 3000, { id: "later" }); // seconds after the timeout and the abort
  assert.equal(await q.take({ timeout: 30 }), undefined);
  const ac = new AbortController();
  const aborted = q.take({ signal: ac.signal });
  setTimeout(() => ac.abort(new Error("stop")), 20);
  await assert.rejects(aborted, /stop/);
  assert.equal(await q.size(), 1);
  const job = await q.take({ timeout: 5000 });
  assert.equal(job.value, "later");
  assert.equal(job.attempt, 1);
  await job.ack();

  // A take that leaves while the script handing it an item runs: the item goes back, its
  // attempt not counted.
  await q.offer("now", 0, { id: "now" });
  for (let i = 0; i < 20; i++) {
    const quick = new AbortController();
    const p = q.take({ signal: quick.signal });
    quick.abort(new Error("gone"));
    await assert.rejects(p, /gone/);
    await sleep(1);
  }
  await sleep(50);
  const back = await q.take({ timeout: 5000 });
  assert.deepEqual([back.value, back.attempt], ["now", 1]);
  assert.equal(await back.ack(), true);
  const s = await q.stats();
  assert.equal(s.inFlight, 0);
  assert.ok(s.released > 0, "no take left while its item was on the way: the case was not exercised");
});

test("leases: an expired lease redelivers with a new token, a stale ack returns false; extend keeps it", async () => {
  const q = open({ visibilityTimeout: 150 });
  await q.offer({ n: 1 }, 0, { id: "a" });
  const first = await q.take();
  assert.equal(first.attempt, 1);
  // Not acked within 150 ms: the lease runs out and the item comes back, due at once.
  const second = await q.take({ timeout: 5000 });
  assert.deepEqual([second.id, second.attempt], ["a", 2]);
  assert.equal(await first.ack(), false, "an ack from a delivery that lost its lease");
  assert.equal(await first.nack(), false);
  assert.equal(await first.extend(), false);
  assert.equal(await second.extend(5000), true); // seconds past the take's timeout
  assert.equal(await q.take({ timeout: 400 }), undefined, "an extended lease does not run out");
  assert.equal(await second.ack(), true);
  assert.equal(await second.ack(), false, "acked twice");
  const s = await q.stats();
  assert.deepEqual([s.pending, s.inFlight, s.dead], [0, 0, 0]);
  // One word, one meaning: the expired lease is a redelivery here, in every process's figures and in the event.
  assert.deepEqual([s.delivered, s.retried, s.redelivered, s.all.redelivered], [2, 1, 1, 1]);
});

test("nack: back after its delay; after maxAttempts into the dead letters; retryDead", async () => {
  const q = open({ maxAttempts: 2 });
  await q.offer({ job: "x" }, 0, { id: "x" });
  const a = await q.take();
  const t = Date.now();
  assert.equal(await a.nack({ delayMs: 80 }), true);
  const b = await q.take();
  assert.ok(Date.now() >= t + 80, "a nacked item came back before its delay");
  assert.equal(b.attempt, 2);
  assert.equal(await b.nack({ reason: new Error("card declined") }), true);
  assert.equal(await q.take({ timeout: 100 }), undefined);
  const [dead] = (await q.deadLetters()).items;
  assert.equal(dead.id, "x");
  assert.deepEqual(dead.value, { job: "x" });
  assert.equal(dead.attempt, 2);
  assert.match(dead.reason, /card declined/);
  assert.equal(await q.retryDead("x"), true);
  assert.equal(await q.retryDead("x"), false);
  const c = await q.take();
  assert.deepEqual([c.id, c.attempt], ["x", 1]);
  await c.ack();
  assert.deepEqual(await q.deadLetters(), { items: [], next: undefined });
  const s = await q.stats();
  assert.deepEqual([s.retried, s.redelivered, s.all.redelivered], [1, 0, 0], "a nack's retry is no redelivery");
});

test("process(): acks on success, extends leases while the handler runs, dead-letters an always-failing item", async () => {
  const q = open({ visibilityTimeout: 600, maxAttempts: 3 });
  const seen = [];
  const worker = q.process(
    async (value, job) => {
      seen.push([value, job.attempt]);
      if (value === "slow") await sleep(2000); // 3 leases long: extended, not redelivered
      if (value === "bad") throw new Error(`bad item, attempt ${job.attempt}`);
    },
    { concurrency: 2, retryDelayMs: 0 },
  );
  await q.offerMany([
    { value: "slow", delayMs: 0 },
    { value: "bad", delayMs: 10, id: "bad" },
    { value: "ok", delayMs: 20 },
  ]);
  for (let i = 0; i < 200 && (await q.stats()).dead === 0; i++) await sleep(20);
  for (let i = 0; i < 200 && (await q.stats()).inFlight > 0; i++) await sleep(20);
  await worker.close();
  assert.deepEqual(
    seen.map(([v, n]) => `${v}#${n}`).sort(),
    ["slow#1", "bad#1", "bad#2", "bad#3", "ok#1"].sort(),
    `handler calls: ${JSON.stringify(seen)}`,
  );
  const [dead] = (await q.deadLetters()).items;
  assert.equal(dead.id, "bad");
  assert.equal(dead.attempt, 3);
  assert.match(dead.reason, /bad item, attempt 3/);
  const s = await q.stats();
  assert.deepEqual([s.pending, s.inFlight, s.dead], [0, 0, 1]);
});

test("close() waits for running process() handlers and keeps extending their leases meanwhile", async () => {
  const q = open({ visibilityTimeout: 600 });
  const other = twin(q, { visibilityTimeout: 600 });
  let calls = 0;
  q.process(async () => {
    calls++;
    await sleep(2000); // three leases long
  });
  await q.offer("long", 0);
  while (calls === 0) await sleep(10);
  const stolen = other.take({ timeout: 2500 });
  await q.close();
  assert.equal(await stolen, undefined, "the item was redelivered while close() waited for its handler");
  assert.equal(calls, 1);
  const s = await other.stats();
  assert.deepEqual([s.pending, s.inFlight], [0, 0]);
});

test("entries written by someone else are dead-lettered; the rest keeps working; a wrong key type is a clear error", async () => {
  const q = open();
  const { items, pending } = q.keys;
  await q.offer("good", 0, { id: "good" });
  await fx.raw.hset(items, "garbled", "not a record");
  await fx.raw.zadd(pending, 0, "0000000000000001garbled");
  await fx.raw.zadd(pending, 0, "junk");
  await fx.raw.zadd(pending, 0, "0000000000000002orphan");
  // A record in the one format there is (js/redis/lua/includes/record.lua), holding bad JSON.
  const save = `--- @include "record"\nsave(ARGV[1], { state = 'p', seq = hex(3), deadline = '0', attempt = 0, token = '', value = ARGV[2] })`;
  await fx.raw.eval(
    sourceOf("test.lua", luaDir, save),
    6,
    ...Object.values(q.keys).slice(0, 6),
    "badjson",
    "{not json",
  );
  await fx.raw.zadd(pending, 0, "0000000000000003badjson");
  const job = await q.take();
  assert.equal(job.value, "good");
  await job.ack();
  assert.equal(await q.take({ timeout: 100 }), undefined);
  const dead = Object.fromEntries((await q.deadLetters()).items.map((d) => [d.id, d]));
  assert.deepEqual(Object.keys(dead).sort(), ["badjson", "garbled", "junk", "orphan"]);
  assert.equal(dead.garbled.reason, "malformed record");
  assert.equal(dead.garbled.raw, "not a record");
  assert.equal(dead.junk.reason, "malformed pending entry");
  assert.equal(dead.orphan.reason, "pending entry without a record");
  assert.match(dead.badjson.reason, /^value is not JSON/);
  assert.equal(dead.badjson.raw, "{not json");
  assert.equal(await q.size(), 0);

  const other = open();
  await fx.raw.set(other.keys.pending, "a string");
  await assert.rejects(other.offer(1, 5), /a key of this queue holds another type of value/);
});

test("one timer per process: idle waits arm it, a message from another process re-arms it for an earlier head", async () => {
  const consumer = open({ safetyInterval: 60_000 });
  const producer = twin(consumer);
  await producer.offer("far", 60_000, { id: "far" });
  const taken = consumer.take();
  await sleep(200);
  const idle = await consumer.stats();
  assert.equal(idle.timersArmed, 1);
  assert.ok(idle.wakes <= 2, `${idle.wakes} wake-ups while waiting for an item a minute away: polling?`);
  // Another process offers an earlier item: its message re-arms the consumer's timer.
  const t = Date.now();
  await producer.offer("near", 50, { id: "near" });
  const job = await taken;
  assert.equal(job.value, "near");
  assert.ok(Date.now() >= t + 50);
  assert.ok(Date.now() - t < 2000, `the earlier item came out ${Date.now() - t} ms after its offer`);
  const s = await consumer.stats();
  assert.ok(s.messages >= 1, "no head message arrived");
  assert.ok(s.timersArmed <= 1);
  await job.ack();
});

test("a script missing from the server (SCRIPT FLUSH, a restart) is loaded again", async () => {
  const q = open();
  await q.offer(1, 0);
  await fx.raw.script("FLUSH");
  await q.offer(2, 0);
  const a = await q.take();
  const b = await q.take();
  assert.deepEqual([a.value, b.value], [1, 2]);
});

test("for await takes jobs until close(); close() rejects waiting takes; keys share one hash tag", async () => {
  const q = open();
  await q.offerMany([1, 2, 3].map((value) => ({ value, delayMs: value })));
  const got = [];
  const loop = (async () => {
    for await (const job of q) {
      got.push(job.value);
      await job.ack();
      if (got.length === 3) setTimeout(() => q.close(), 10);
    }
  })();
  await loop;
  assert.deepEqual(got, [1, 2, 3]);
  await assert.rejects(q.take(), { name: "ClosedError" });
  await assert.rejects(q.offer(1, 1), { name: "ClosedError" });
  for (const key of Object.values(q.keys)) assert.match(key, /^tarry:\{q\d+\}:/);
});
