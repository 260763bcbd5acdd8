// The engine contract (docs/semantics.md), written once: every case below runs against each
// durable engine through a small adapter, so RedisDelayQueue and DurableDelayQueue are held to
// the same methods, options and guarantees. Runners: tests/contract/durable.test.mjs
// (DurableDelayQueue on the fake storage, under Node), tests/contract/workerd.test.mjs (in real
// workerd: these cases run inside a Durable Object), tests/contract/redis.test.mjs
// (RedisDelayQueue on a private redis-server). This module imports nothing but node:assert,
// which workerd provides (nodejs_compat), so it runs unchanged in both runtimes.
//
// An engine, as each runner builds it (a fresh one per case):
//   name
//   open({ maxAttempts }?)  → a fresh, empty queue (at most one per case on Durable Objects)
//   consume(queue, n, handler, { retryDelayMs }?) → the engine's own consumer (process() on
//     Redis, deliver() from the object's alarm on Durable Objects) runs handler(value, job)
//     until n deliveries have been made, and resolves once the queue has stored their
//     outcomes, with [{ id, value, deadline, attempt, schedule, at }] in the order handed out
//     (delivery() below; `at`: Date.now() as the handler began). A case makes no more than n
//     deliveries due meanwhile.
//   state(queue) → everything the engine holds for the queue, to compare before and after
//   unstorable: [[label, value, path]]: values it cannot hold, and the path its TypeError names
//   tied(name) → an id for `name` in the scope where equal deadlines come out first in, first
//     out: the name itself on most engines; on a queue over several shards, the name with a
//     suffix that puts it on the first shard (FIFO among ties holds within a shard)
//
// Time is real (Redis decides it with its own clock): delays are tens of ms, orders rest on
// deadlines set apart, and "never early" is checked for every delivery.
import assert from "node:assert/strict";
import { scheduleCases } from "./schedule-cases.mjs";

/**
 * [{ name, run(engine), inMemory }], in the order they run. `inMemory`: the case holds for the
 * in-memory DelayQueue too (tests/contract/memory.test.mjs runs those), where the concept
 * exists: it then uses only what every engine has (offer and offerAt with { id, ifExists },
 * delayOf(id), sizeOf(), consume()), and `e.memory` where DelayQueue's shape differs.
 */
export const cases = [];
const test = (name, run, { inMemory = false } = {}) => cases.push({ name, run, inMemory });
const EVERY_ENGINE = { inMemory: true };

const HOUR = 3_600_000;
/** A generated id: 22 base64url characters holding 128 random bits (js/engine/ids.js). */
const GENERATED = /^[A-Za-z0-9_-]{22}$/;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ack = () => {};
const values = (deliveries) => deliveries.map((d) => d.value);

/** Never early: each delivery began at or after its deadline (Date.now() is whole ms). */
function assertOnTime(deliveries) {
  for (const d of deliveries) {
    assert.ok(d.at >= Math.floor(d.deadline), `${JSON.stringify(d.value)} handed out ${d.deadline - d.at} ms early`);
  }
}

/**
 * What every engine's consume() records of one delivery, as its handler begins: the item, and
 * `at` (Date.now() then), which the cases hold against its deadline.
 */
export function delivery(value, job) {
  return { id: job.id, value, deadline: job.deadline, attempt: job.attempt, schedule: job.schedule, at: Date.now() };
}

/** Consumes n and checks that none came early. */
async function consume(e, q, n, handler = ack, opts) {
  const got = await e.consume(q, n, handler, opts);
  assert.equal(got.length, n, `consumed ${got.length} of ${n}`);
  assertOnTime(got);
  return got;
}

/** The number of pending items: size() on the durable engines, `size` in memory (e.size). */
const sizeOf = (e, q) => (e.size !== undefined ? e.size(q) : q.size());

/** Counts by state, from stats(). */
async function counts(q) {
  const { pending, inFlight, dead } = await q.stats();
  return { pending, inFlight, dead };
}

/**
 * Items `ids` offered due now, 20 ms apart, and delivered once each to a handler that throws:
 * on a queue opened with maxAttempts 1, dead letters, in that order of death.
 */
async function bury(e, q, ids) {
  const before = await counts(q);
  const t = Date.now();
  await q.offerMany(ids.map((id, i) => ({ value: `value of ${id}`, deadline: t + 20 * i, id })));
  await consume(e, q, ids.length, (value) => {
    throw new Error(`boom: ${value}`);
  });
  assert.deepEqual(await counts(q), { ...before, dead: before.dead + ids.length });
}

// ---- ids and offers ------------------------------------------------------------------------

test("generated ids are random (128 bits in 22 base64url characters), one per item, from offer, offerAt and offerMany", async (e) => {
  const q = await e.open();
  const ids = [
    await q.offer("a", HOUR),
    await q.offerAt("b", Date.now() + HOUR),
    await q.offerAt("c", new Date(Date.now() + HOUR)),
    ...(await q.offerMany([
      { value: "d", delayMs: HOUR },
      { value: "e", deadline: Date.now() + HOUR },
    ])),
  ];
  for (const id of ids) assert.match(id, GENERATED);
  assert.equal(new Set(ids).size, 5);
  assert.equal(await q.size(), 5);
});

test("a caller's id names the item: any well-formed string up to 512 code units; one id, one item", async (e) => {
  const q = await e.open();
  const long = "x".repeat(512);
  const odd = "ünïcødé ✓ 🎉 \u0000 {braces} | pipes | and:colons";
  assert.equal(await q.offer("a", HOUR, { id: "order-1" }), "order-1");
  assert.equal(await q.offerAt("b", Date.now() + HOUR, { id: long }), long);
  assert.deepEqual(await q.offerMany([{ value: "c", delayMs: HOUR, id: odd }]), [odd]);
  assert.equal(await q.size(), 3);
  for (const id of ["order-1", long, odd]) assert.ok((await q.delayOf(id)) > HOUR - 60_000, id);
  assert.equal(await q.offer("a again", HOUR, { id: "order-1" }), "order-1");
  assert.equal(await q.size(), 3, "the same id names the same item");
  assert.equal(await q.cancel(odd), true);
  assert.equal(await q.delayOf(odd), undefined);
});

test("delayOf counts down to the deadline, from the offer's call; negative when overdue; undefined for no item", async (e) => {
  const q = await e.open();
  await q.offer("soon", 5000, { id: "d" });
  const first = await q.delayOf("d");
  assert.ok(first > 0 && first <= 5000, `delayOf ${first}`);
  await sleep(60);
  const later = await q.delayOf("d");
  assert.ok(first - later >= 50, `${first} then ${later} after 60 ms`);
  await q.offerAt("past", Date.now() - 10_000, { id: "p" });
  assert.ok((await q.delayOf("p")) <= -10_000);
  await q.offerAt("date", new Date(Date.now() + HOUR), { id: "date" });
  assert.ok((await q.delayOf("date")) > HOUR - 60_000);
  assert.equal(await q.delayOf("nothing here"), undefined);
});

test("size() counts the pending items", async (e) => {
  const q = await e.open();
  assert.equal(await q.size(), 0);
  await q.offer(1, HOUR);
  await q.offerMany([
    { value: 2, delayMs: HOUR },
    { value: 3, delayMs: -5 },
  ]);
  assert.equal(await q.size(), 3);
  await consume(e, q, 1);
  assert.equal(await q.size(), 2);
});

test("offerMany resolves with the ids in order, given and generated", async (e) => {
  const q = await e.open();
  const ids = await q.offerMany([
    { value: 1, delayMs: HOUR, id: "one" },
    { value: 2, deadline: Date.now() + HOUR },
    { value: 3, deadline: new Date(Date.now() + HOUR), id: "three" },
  ]);
  assert.equal(ids.length, 3);
  assert.equal(ids[0], "one");
  assert.match(ids[1], GENERATED);
  assert.equal(ids[2], "three");
  assert.equal(await q.size(), 3);
  assert.deepEqual(await q.offerMany([]), []);
});

test("offerMany is all or nothing: one bad item and none lands", async (e) => {
  const q = await e.open();
  const before = await e.state(q);
  const bad = [
    [
      [
        { value: "ok", delayMs: 10 },
        { value: undefined, delayMs: 10 },
      ],
      "TypeError",
      /items\[1\]\.value/,
    ],
    [
      [
        { value: "ok", delayMs: 10 },
        { value: "x", delayMs: Number.NaN },
      ],
      "RangeError",
      /items\[1\]\.delayMs/,
    ],
    [
      [
        { value: "ok", delayMs: 10 },
        { value: "x", deadline: "soon" },
      ],
      "TypeError",
      /items\[1\]\.deadline/,
    ],
    [
      [
        { value: "ok", delayMs: 10 },
        { value: "x", delayMs: 1, id: "" },
      ],
      "RangeError",
      /items\[1\]\.id/,
    ],
  ];
  for (const [items, name, message] of bad) {
    await assert.rejects(q.offerMany(items), { name, message }, JSON.stringify(items));
  }
  assert.equal(await q.size(), 0);
  assert.deepEqual(await e.state(q), before);
});

test("offerMany: items take effect in order, so a later item's ifExists meets an earlier one", async (e) => {
  const q = await e.open();
  const ids = await q.offerMany([
    { value: "first", delayMs: HOUR, id: "m" },
    { value: "second", delayMs: 10, id: "m", ifExists: "keep" },
    { value: "third", delayMs: HOUR, id: "n" },
    { value: "fourth", delayMs: 20, id: "n" },
  ]);
  assert.deepEqual(ids, ["m", "m", "n", "n"]);
  assert.equal(await q.size(), 2);
  assert.ok((await q.delayOf("m")) > HOUR - 60_000, "kept: the first offer of m");
  assert.ok((await q.delayOf("n")) <= 20, "replaced: the last offer of n");
  const [got] = await consume(e, q, 1);
  assert.deepEqual([got.id, got.value], ["n", "fourth"]);
});

test("null is a value: offered, held and handed out as null", async (e) => {
  const q = await e.open();
  const t = Date.now();
  await q.offer(null, 0, { id: "a" });
  await q.offerAt(null, t + 40, { id: "b" });
  await q.offerMany([{ value: null, deadline: t + 80, id: "c" }]);
  assert.equal(await q.size(), 3);
  const got = await consume(e, q, 3);
  assert.deepEqual(
    got.map((d) => [d.id, d.value]),
    [
      ["a", null],
      ["b", null],
      ["c", null],
    ],
  );
});

test("a value the engine cannot hold is refused with a TypeError naming its path, and nothing changes", async (e) => {
  const q = await e.open();
  await q.offer("kept", HOUR);
  const before = await e.state(q);
  assert.ok(e.unstorable.length > 0);
  for (const [label, value, path] of e.unstorable) {
    const named = (prefix) => new RegExp(`^${prefix}${path.replace(/[.[\]]/g, "\\$&")}\\s`);
    await assert.rejects(q.offer(value, 10), { name: "TypeError", message: named("value") }, label);
    await assert.rejects(q.offerAt(value, Date.now()), { name: "TypeError", message: named("value") }, label);
    await assert.rejects(
      q.offerMany([
        { value: 1, delayMs: 1 },
        { value, delayMs: 1 },
      ]),
      { name: "TypeError", message: named("items\\[1\\]\\.value") },
      label,
    );
  }
  assert.deepEqual(await e.state(q), before);
});

// ---- ifExists -------------------------------------------------------------------------------

// Each offer returns what the first offer of its id returned: the id on the durable engines,
// the item's handle in memory.

test(
  'ifExists "replace" (the default): the new value and deadline, a fresh item',
  async (e) => {
    const q = await e.open();
    const x = await q.offer("old", HOUR, { id: "x" });
    assert.equal(await q.offer("new", HOUR / 2, { id: "x" }), x);
    assert.equal(await sizeOf(e, q), 1);
    assert.ok((await q.delayOf("x")) <= HOUR / 2);
    assert.equal(await q.offer("newer", 30, { id: "x", ifExists: "replace" }), x);
    assert.ok((await q.delayOf("x")) <= 30);
    const [got] = await consume(e, q, 1);
    assert.deepEqual([got.id, got.value, got.attempt], ["x", "newer", 1]);
    assert.equal(await sizeOf(e, q), 0);
  },
  EVERY_ENGINE,
);

test(
  'ifExists "keep": the item present stays as it is (throttle)',
  async (e) => {
    const q = await e.open();
    const x = await q.offer("first", 5000, { id: "x" }); // seconds: still pending after the calls below
    assert.equal(await q.offer("second", HOUR, { id: "x", ifExists: "keep" }), x);
    assert.equal(await q.offerAt("third", Date.now() - 1000, { id: "x", ifExists: "keep" }), x);
    const many = e.memory
      ? q.offerMany(["fourth"], 0, { ids: ["x"], ifExists: "keep" }) // DelayQueue's batch: values, delays, options
      : await q.offerMany([{ value: "fourth", delayMs: 0, id: "x", ifExists: "keep" }]);
    assert.deepEqual(many, [x]);
    const delay = await q.delayOf("x");
    assert.ok(delay > 0 && delay <= 5000, `delayOf ${delay}: the first offer's`);
    assert.equal(await sizeOf(e, q), 1);
    assert.equal(await q.reschedule("x", 0), true); // due now: the value is still the first offer's
    const [got] = await consume(e, q, 1);
    assert.deepEqual([got.value, got.attempt], ["first", 1]);
  },
  EVERY_ENGINE,
);

test(
  'ifExists "extend": a pending item takes the later deadline and the new value (debounce)',
  async (e) => {
    const q = await e.open();
    // Deadlines seconds apart: a loaded machine may take 100 ms between two calls.
    const x = await q.offer("a", 60, { id: "x" });
    assert.equal(await q.offer("b", 2000, { id: "x", ifExists: "extend" }), x);
    assert.ok((await q.delayOf("x")) > 1000, "moved to the later deadline");
    const y = await q.offer("c", 2500, { id: "y" });
    assert.equal(await q.offer("d", 10, { id: "y", ifExists: "extend" }), y);
    assert.ok((await q.delayOf("y")) > 1000, "an earlier deadline does not move it");
    assert.equal(await sizeOf(e, q), 2);
    const got = await consume(e, q, 2);
    assert.deepEqual(
      got.map((d) => [d.id, d.value, d.attempt]),
      [
        ["x", "b", 1],
        ["y", "d", 1],
      ],
    );
  },
  EVERY_ENGINE,
);

test(
  'ifExists "extend" to an earlier deadline: the item keeps its deadline and its place among equal ones',
  async (e) => {
    const q = await e.open();
    const t = Date.now() + 150;
    await q.offerAt("a", t, { id: "a" });
    await q.offerAt("b", t, { id: "b" });
    // Moved to the earlier deadline, b would come first; moved behind a at t, after a.
    await q.offerAt("b2", t - 100, { id: "b", ifExists: "extend" });
    await q.offerAt("a2", t - 100, { id: "a", ifExists: "extend" });
    await q.offerAt("c", t, { id: "c" });
    assert.deepEqual(
      (await consume(e, q, 3)).map((d) => [d.id, d.value]),
      [
        ["a", "a2"],
        ["b", "b2"],
        ["c", "c"],
      ],
    );
  },
  EVERY_ENGINE,
);

test(
  "ifExists when the id is absent: every mode offers the item",
  async (e) => {
    const q = await e.open();
    const t = Date.now();
    await q.offerAt("k", t, { id: "k", ifExists: "keep" });
    await q.offerAt("e", t + 20, { id: "e", ifExists: "extend" });
    await q.offerAt("r", t + 40, { id: "r", ifExists: "replace" });
    assert.deepEqual(values(await consume(e, q, 3)), ["k", "e", "r"]);
  },
  EVERY_ENGINE,
);

test("ifExists on an item in flight: keep leaves it; replace and extend offer a new item, and the running delivery's ack changes nothing", async (e) => {
  const q = await e.open();
  const t = Date.now();
  await q.offerMany(["A", "B", "C"].map((id, i) => ({ value: id, deadline: t + 20 * i, id })));
  const first = await consume(e, q, 3, async (_value, job) => {
    if (job.id === "A") assert.equal(await q.offer("A2", 0, { id: "A", ifExists: "keep" }), "A");
    if (job.id === "B") await q.offer("B2", 50, { id: "B" });
    if (job.id === "C") await q.offer("C2", 50, { id: "C", ifExists: "extend" });
  });
  assert.deepEqual(values(first), ["A", "B", "C"]);
  const second = await consume(e, q, 2);
  assert.deepEqual(
    second.map((d) => [d.id, d.value, d.attempt]),
    [
      ["B", "B2", 1],
      ["C", "C2", 1],
    ],
  );
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 0 });
});

test("ifExists on a dead letter: keep leaves it dead; replace and extend put a new pending item in its place", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["D1", "D2", "D3"]);
  await q.offer("k", HOUR, { id: "D1", ifExists: "keep" });
  await q.offer("r", HOUR, { id: "D2" });
  await q.offer("x", HOUR, { id: "D3", ifExists: "extend" });
  assert.deepEqual(await counts(q), { pending: 2, inFlight: 0, dead: 1 });
  assert.equal(await q.delayOf("D1"), undefined);
  assert.ok((await q.delayOf("D2")) > HOUR - 60_000);
  assert.ok((await q.delayOf("D3")) > HOUR - 60_000);
  assert.equal(await q.retryDead("D2"), false, "no longer dead");
  assert.equal(await q.retryDead("D1"), true, "still dead");
});

// ---- cancel, reschedule ------------------------------------------------------------------------

test("cancel: true if it was pending, then false; false for no item", async (e) => {
  const q = await e.open();
  await q.offer("a", 50, { id: "a" });
  await q.offer("b", 60, { id: "b" });
  assert.equal(await q.cancel("a"), true);
  assert.equal(await q.cancel("a"), false);
  assert.equal(await q.cancel("nothing here"), false);
  assert.equal(await q.size(), 1);
  assert.equal(await q.delayOf("a"), undefined);
  assert.deepEqual(values(await consume(e, q, 1)), ["b"]);
  assert.equal(await q.cancel("b"), false, "delivered and acked: gone");
});

test("reschedule: a new delay from the call, true if it was pending; false for no item", async (e) => {
  const q = await e.open();
  await q.offer("a", 40, { id: "a" });
  await q.offer("b", HOUR, { id: "b" });
  assert.equal(await q.reschedule("a", 2 * HOUR), true);
  assert.ok((await q.delayOf("a")) > HOUR);
  assert.equal(await q.reschedule("b", 30), true);
  assert.ok((await q.delayOf("b")) <= 30);
  assert.equal(await q.reschedule("nothing here", 10), false);
  const [got] = await consume(e, q, 1);
  assert.deepEqual([got.id, got.value, got.attempt], ["b", "b", 1]);
  assert.equal(await q.reschedule("b", 10), false, "delivered and acked: gone");
  assert.equal(await q.reschedule("a", -100), true, "a negative delay: overdue");
  assert.ok((await q.delayOf("a")) <= -100);
  assert.deepEqual(values(await consume(e, q, 1)), ["a"]);
});

// ---- order -------------------------------------------------------------------------------------

test("deadline order across offer, offerAt and offerMany; FIFO among equal deadlines; never early", async (e) => {
  const q = await e.open();
  const t = Date.now() + 150;
  await q.offerAt("tie 1", t, { id: e.tied("tie 1") });
  await q.offerMany([
    { value: "tie 2", deadline: t, id: e.tied("tie 2") },
    { value: "first", deadline: t - 100 },
    { value: "tie 3", deadline: new Date(t), id: e.tied("tie 3") },
  ]);
  await q.offer("last", t + 60 - Date.now());
  await q.offerAt("tie 4", new Date(t), { id: e.tied("tie 4") });
  const got = await consume(e, q, 6);
  assert.deepEqual(values(got), ["first", "tie 1", "tie 2", "tie 3", "tie 4", "last"]);
  assert.deepEqual(
    got.slice(1, 5).map((d) => d.deadline),
    [t, t, t, t],
  );
});

test("overdue items (past deadlines, negative delays) are handed out at once, earliest first", async (e) => {
  const q = await e.open();
  const t = Date.now();
  await q.offer("a second ago", -1000);
  await q.offerAt("1970", 0);
  await q.offerAt("a minute ago", new Date(t - 60_000));
  await q.offer("now", 0);
  const got = await consume(e, q, 4);
  assert.deepEqual(values(got), ["1970", "a minute ago", "a second ago", "now"]);
  assert.ok(got[0].at - t < 10_000);
});

// ---- consumption -------------------------------------------------------------------------------

test("a delivery: handler(value, job) with job { id, value, deadline, attempt: 1 }, the value as offered", async (e) => {
  const q = await e.open();
  const value = { order: 7, lines: ["tea", "cake"], note: null, nested: { ok: true, n: 1.5 } };
  const t = Date.now() + 30;
  await q.offerAt(value, t, { id: "order-7" });
  let job;
  const [got] = await consume(e, q, 1, (v, j) => {
    job = { id: j.id, value: j.value, deadline: j.deadline, attempt: j.attempt };
    assert.deepEqual(v, value);
  });
  assert.deepEqual(job, { id: "order-7", value, deadline: t, attempt: 1 });
  assert.deepEqual(got.value, value);
});

test("ack: a handler that returns, or resolves, is done with its item", async (e) => {
  const q = await e.open();
  await q.offer("sync", 0, { id: "s" });
  await q.offer("async", 20, { id: "a" });
  await consume(e, q, 2, async (value) => {
    if (value === "async") await sleep(20);
  });
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 0 });
  assert.equal(await q.delayOf("s"), undefined);
  assert.equal(await q.cancel("a"), false);
});

test("retry: a handler that throws or rejects gets the item again retryDelayMs later, its attempt raised", async (e) => {
  const q = await e.open();
  await q.offer("flaky", 0, { id: "f" });
  const got = await consume(
    e,
    q,
    3,
    async (_value, job) => {
      if (job.attempt === 1) throw new Error("first try fails");
      if (job.attempt === 2) await Promise.reject(new Error("second try rejects"));
    },
    { retryDelayMs: 80 },
  );
  assert.deepEqual(
    got.map((d) => [d.id, d.value, d.attempt]),
    [
      ["f", "flaky", 1],
      ["f", "flaky", 2],
      ["f", "flaky", 3],
    ],
  );
  for (const i of [1, 2]) {
    assert.ok(got[i].deadline >= got[i - 1].at + 79, `retry ${i} due ${got[i].deadline - got[i - 1].at} ms after`);
  }
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 0 });
  const stats = await q.stats();
  // One word, one meaning: a nack's retry is retried, never redelivered (an unfinished delivery).
  assert.deepEqual([stats.delivered, stats.retried, stats.redelivered], [3, 2, 0]);
});

test("retryDelayMs as a function: called with (attempt, error) for each failure that is retried", async (e) => {
  const q = await e.open({ maxAttempts: 3 });
  await q.offer("always fails", 0, { id: "f" });
  const calls = [];
  const got = await consume(
    e,
    q,
    3,
    (_value, job) => {
      throw new Error(`failure ${job.attempt}`);
    },
    {
      retryDelayMs: (attempt, error) => {
        calls.push([attempt, error.message]);
        return 30 * attempt;
      },
    },
  );
  assert.deepEqual(
    got.map((d) => d.attempt),
    [1, 2, 3],
  );
  assert.ok(got[1].deadline >= got[0].at + 29);
  assert.ok(got[2].deadline >= got[1].at + 59);
  assert.deepEqual(calls, [
    [1, "failure 1"],
    [2, "failure 2"],
  ]);
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 1 });
});

test("a failing item does not hold back the others: it comes back at its retry deadline", async (e) => {
  const q = await e.open();
  const t = Date.now() + 20;
  await q.offerMany(["A", "B", "C"].map((id, i) => ({ value: id, deadline: t + 40 * i, id })));
  const got = await consume(
    e,
    q,
    4,
    (_value, job) => {
      if (job.id === "A" && job.attempt === 1) throw new Error("A fails once");
    },
    { retryDelayMs: 250 },
  );
  assert.deepEqual(
    got.map((d) => [d.id, d.attempt]),
    [
      ["A", 1],
      ["B", 1],
      ["C", 1],
      ["A", 2],
    ],
  );
});

test("after maxAttempts deliveries the item is a dead letter: not pending, not in flight, counted dead", async (e) => {
  const q = await e.open({ maxAttempts: 2 });
  await q.offer("poison", 0, { id: "p" });
  await q.offer("fine", HOUR, { id: "ok" });
  const got = await consume(
    e,
    q,
    2,
    () => {
      throw new Error("boom 42");
    },
    { retryDelayMs: 10 },
  );
  assert.deepEqual(
    got.map((d) => d.attempt),
    [1, 2],
  );
  assert.deepEqual(await counts(q), { pending: 1, inFlight: 0, dead: 1 });
  assert.equal(await q.size(), 1);
  assert.equal(await q.delayOf("p"), undefined);
  assert.equal(await q.cancel("p"), false);
  assert.equal(await q.reschedule("p", 10), false);
  assert.equal(await q.retryDead("ok"), false, "a pending item is not dead");
  assert.equal(await q.retryDead("p"), true);
});

test("maxAttempts is 5 unless the queue is opened with another", async (e) => {
  const q = await e.open();
  await q.offer("poison", 0, { id: "p" });
  const got = await consume(
    e,
    q,
    5,
    () => {
      throw new Error("never works");
    },
    { retryDelayMs: 0 },
  );
  assert.deepEqual(
    got.map((d) => d.attempt),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 1 });
});

test("deadLetters: { items, next } pages in order of death, each { id, state, value, deadline, attempt, reason, diedAt }", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  const start = Date.now();
  const ids = ["d0", "d1", "d2", "d3", "d4"];
  await bury(e, q, ids);
  const all = await q.deadLetters();
  assert.equal(all.next, undefined);
  assert.deepEqual(
    all.items.map((d) => d.id),
    ids,
  );
  for (const d of all.items) {
    assert.equal(d.state, "dead");
    assert.equal(d.value, `value of ${d.id}`);
    assert.equal(d.attempt, 1);
    assert.equal(typeof d.deadline, "number");
    assert.match(d.reason, new RegExp(`boom: value of ${d.id}`));
    assert.ok(d.diedAt >= start - 1000 && d.diedAt <= Date.now() + 1000, `diedAt ${d.diedAt}`);
  }
  const pages = [];
  let after;
  do {
    const page = await q.deadLetters({ limit: 2, after });
    pages.push(page.items.map((d) => d.id));
    after = page.next;
    if (after !== undefined) assert.equal(typeof after, "string");
  } while (after !== undefined);
  assert.deepEqual(pages, [["d0", "d1"], ["d2", "d3"], ["d4"]]);
});

test("retryDead: a dead letter comes back due now, its attempts reset; false for what is not dead", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["x"]);
  await q.offer("pending", HOUR, { id: "p" });
  assert.equal(await q.retryDead("x"), true);
  assert.equal(await q.retryDead("x"), false);
  assert.equal(await q.retryDead("p"), false);
  assert.equal(await q.retryDead("nothing here"), false);
  assert.deepEqual(await counts(q), { pending: 2, inFlight: 0, dead: 0 });
  assert.ok((await q.delayOf("x")) <= 0);
  const [got] = await consume(e, q, 1);
  assert.deepEqual([got.id, got.value, got.attempt], ["x", "value of x", 1]);
  assert.deepEqual(await counts(q), { pending: 1, inFlight: 0, dead: 0 });
});

test("deleteDead: removes a dead letter, true if it was dead; false for what is not", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["x", "y"]);
  await q.offer("pending", HOUR, { id: "p" });
  assert.equal(await q.deleteDead("x"), true);
  assert.equal(await q.deleteDead("x"), false);
  assert.equal(await q.deleteDead("p"), false);
  assert.equal(await q.deleteDead("nothing here"), false);
  assert.deepEqual(await counts(q), { pending: 1, inFlight: 0, dead: 1 });
  assert.deepEqual(
    (await q.deadLetters()).items.map((d) => d.id),
    ["y"],
  );
});

test("purgeDead({ olderThan }): removes the dead letters at least that old, and says how many", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["old"]);
  await sleep(2000); // young is purged too if the purge runs half this after its Date.now(): seconds
  await bury(e, q, ["young"]);
  const { items } = await q.deadLetters();
  assert.deepEqual(
    items.map((d) => d.id),
    ["old", "young"],
  );
  const middle = (items[0].diedAt + items[1].diedAt) / 2;
  assert.equal(await q.purgeDead({ olderThan: Date.now() - middle }), 1);
  assert.deepEqual(
    (await q.deadLetters()).items.map((d) => d.id),
    ["young"],
  );
  assert.equal(await q.purgeDead({ olderThan: HOUR }), 0);
  assert.equal(await q.purgeDead(), 1, "by default, every dead letter");
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 0 });
});

test("an item in flight is not pending: cancel and reschedule say false, delayOf undefined, size() leaves it out", async (e) => {
  const q = await e.open();
  await q.offer("busy", 0, { id: "x" });
  await q.offer("waiting", HOUR, { id: "w" });
  let during;
  await consume(e, q, 1, async () => {
    during = {
      cancel: await q.cancel("x"),
      reschedule: await q.reschedule("x", 10),
      delayOf: await q.delayOf("x"),
      size: await q.size(),
      counts: await counts(q),
    };
  });
  assert.deepEqual(during, {
    cancel: false,
    reschedule: false,
    delayOf: undefined,
    size: 1,
    counts: { pending: 1, inFlight: 1, dead: 0 },
  });
  assert.deepEqual(await counts(q), { pending: 1, inFlight: 0, dead: 0 });
});

test("a handler may offer: what it offers waits for its own deadline", async (e) => {
  const q = await e.open();
  await q.offer("first", 0, { id: "first" });
  await consume(e, q, 1, async () => {
    await q.offer("follow-up", 80, { id: "next" });
  });
  assert.ok((await q.delayOf("next")) > 0);
  const [got] = await consume(e, q, 1);
  assert.deepEqual([got.id, got.value, got.attempt], ["next", "follow-up", 1]);
});

test("stats(): counts by state, the head's delay, and the deliveries made", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  assert.deepEqual(await counts(q), { pending: 0, inFlight: 0, dead: 0 });
  assert.equal((await q.stats()).headDelay, undefined);
  await q.offer("later", HOUR);
  await q.offer("now", 0);
  await q.offer("fails", 30);
  await consume(e, q, 2, (value) => {
    if (value === "fails") throw new Error("no");
  });
  const stats = await q.stats();
  assert.deepEqual(
    { pending: stats.pending, inFlight: stats.inFlight, dead: stats.dead },
    { pending: 1, inFlight: 0, dead: 1 },
  );
  assert.ok(stats.headDelay > HOUR - 60_000 && stats.headDelay <= HOUR, `headDelay ${stats.headDelay}`);
  assert.equal(stats.delivered, 2);
  assert.equal(stats.retried, 0);
  assert.equal(stats.redelivered, 0);
  for (const k of ["latenessP50", "latenessP99", "latenessMax", "wakes", "earlyWakes"]) {
    assert.equal(typeof stats[k], "number", k);
  }
});

// ---- inspection, pause, events -----------------------------------------------------------------

test("get(id): state, value, deadline and attempt of an item pending, in flight or dead; undefined for none", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  const before = Date.now();
  await q.offer({ n: 1 }, HOUR, { id: "p" });
  const p = await q.get("p");
  assert.deepEqual(
    { ...p, deadline: undefined },
    { id: "p", state: "pending", value: { n: 1 }, deadline: undefined, attempt: 0 },
  );
  assert.ok(p.deadline >= before + HOUR - 1000 && p.deadline <= Date.now() + HOUR + 1000, `deadline ${p.deadline}`);
  await q.offer("busy", 0, { id: "f" });
  let during;
  await consume(e, q, 1, async () => {
    during = await q.get("f");
  });
  assert.equal(during.state, "inFlight");
  assert.equal(during.value, "busy");
  assert.equal(during.attempt, 1);
  if (during.leaseExpiry !== undefined) assert.ok(during.leaseExpiry > Date.now() - 60_000);
  assert.equal(await q.get("f"), undefined, "acked: gone");
  await bury(e, q, ["d"]);
  const d = await q.get("d");
  assert.equal(d.state, "dead");
  assert.equal(d.attempt, 1);
  assert.match(d.reason, /boom: value of d/);
  assert.equal(typeof d.diedAt, "number");
  assert.equal(await q.get("nothing here"), undefined);
  p.value.n = 2;
  assert.deepEqual((await q.get("p")).value, { n: 1 }, "get() hands out a copy");
});

test("pending(): { items, next } pages in deadline order, FIFO among ties; a cursor outlives the item it names", async (e) => {
  const q = await e.open();
  const t = Date.now() + HOUR;
  const offers = [];
  for (let i = 0; i < 7; i++) offers.push({ value: i, deadline: t + 1000 * Math.floor(i / 2), id: e.tied(`i${i}`) });
  await q.offerMany([...offers].reverse().sort((a, b) => a.deadline - b.deadline));
  const all = await q.pending();
  assert.equal(all.next, undefined);
  const expected = ["i1", "i0", "i3", "i2", "i5", "i4", "i6"].map(e.tied); // offered in reverse within each deadline
  assert.deepEqual(
    all.items.map((x) => x.id),
    expected,
  );
  for (const x of all.items) assert.deepEqual(Object.keys(x).sort(), ["attempt", "deadline", "id", "state", "value"]);
  const first = await q.pending({ limit: 3 });
  assert.deepEqual(
    first.items.map((x) => x.id),
    expected.slice(0, 3),
  );
  assert.equal(typeof first.next, "string");
  assert.equal(await q.cancel(e.tied("i3")), true, "the item the cursor names leaves");
  await q.offerAt("before the cursor", t + 500, { id: e.tied("new") });
  const pages = [];
  let after = first.next;
  while (after !== undefined) {
    const page = await q.pending({ limit: 2, after });
    pages.push(page.items.map((x) => x.id));
    after = page.next;
  }
  assert.deepEqual(pages, [["i2", "i5"].map(e.tied), ["i4", "i6"].map(e.tied)]);
  assert.deepEqual((await q.pending({ limit: 1 })).items[0].value, 1);
  await q.offer("due", 0, { id: "due" });
  assert.equal((await q.pending({ limit: 1 })).items[0].id, "due", "a due item comes first");
});

test("inFlight(): a page of the items handed out whose outcome is not stored, with their attempt", async (e) => {
  const q = await e.open();
  assert.deepEqual(await q.inFlight(), { items: [], next: undefined });
  await q.offer("busy", 0, { id: "x" });
  let during;
  await consume(e, q, 1, async () => {
    during = await q.inFlight();
  });
  assert.deepEqual(
    during.items.map((x) => [x.id, x.state, x.value, x.attempt]),
    [["x", "inFlight", "busy", 1]],
  );
  assert.equal(during.next, undefined);
  assert.deepEqual(await q.inFlight(), { items: [], next: undefined });
});

test("pause(): a paused queue hands out nothing, offers still land; resume() delivers what came due", async (e) => {
  const q = await e.open();
  assert.equal((await q.stats()).paused, false);
  assert.equal(await q.pause(), true);
  assert.equal(await q.pause(), false, "already paused");
  assert.equal((await q.stats()).paused, true);
  await q.offer("held", 0, { id: "h" });
  const got = consume(e, q, 1);
  await sleep(300);
  assert.equal((await q.get("h")).state, "pending", "not handed out while paused");
  assert.equal((await q.stats()).pending, 1);
  assert.equal(await q.resume(), true);
  assert.equal(await q.resume(), false, "running already");
  const [delivery] = await got;
  assert.deepEqual([delivery.id, delivery.value], ["h", "held"]);
  assert.equal((await q.stats()).paused, false);
});

test("events: delivered, acked, nacked and dead, each once and in order, as CustomEvents on the queue", async (e) => {
  const q = await e.open({ maxAttempts: 2 });
  assert.ok(q instanceof EventTarget);
  const log = [];
  for (const type of ["delivered", "acked", "nacked", "dead"]) {
    q.addEventListener(type, (event) => log.push({ type, ...event.detail }));
  }
  const t = Date.now();
  await q.offerMany([
    { value: "ok", deadline: t, id: "a" },
    { value: "once", deadline: t + 30, id: "b" },
    { value: "never", deadline: t + 60, id: "c" },
  ]);
  const failed = new Set();
  await consume(
    e,
    q,
    5,
    (value, job) => {
      if (value === "never" || (value === "once" && !failed.has(job.id))) {
        failed.add(job.id);
        throw new Error(`no: ${value}`);
      }
    },
    { retryDelayMs: 20 },
  );
  const of = (id) =>
    log.filter((x) => x.id === id).map((x) => (x.type === "delivered" ? `delivered ${x.attempt}` : x.type));
  assert.deepEqual(of("a"), ["delivered 1", "acked"]);
  assert.deepEqual(of("b"), ["delivered 1", "nacked", "delivered 2", "acked"]);
  assert.deepEqual(of("c"), ["delivered 1", "nacked", "delivered 2", "dead"]);
  for (const x of log.filter((x) => x.type === "delivered")) {
    assert.ok(x.lateness >= 0 && typeof x.deadline === "number", JSON.stringify(x));
  }
  const nacked = log.find((x) => x.type === "nacked" && x.id === "b");
  assert.equal(nacked.attempt, 1);
  assert.match(nacked.reason, /no: once/);
  assert.ok(nacked.delayMs >= 0 && nacked.delayMs <= 20, `delayMs ${nacked.delayMs}`);
  assert.match(log.find((x) => x.type === "dead").reason, /no: never/);
});

test("bad arguments to get, pending and inFlight reject likewise, and change nothing", async (e) => {
  const q = await e.open();
  await q.offer("kept", HOUR, { id: "kept" });
  const T = "TypeError";
  const R = "RangeError";
  await checkBadCalls(e, q, [
    [(q) => q.get(5), T, /^id\b/],
    [(q) => q.get(""), R, /^id\b/],
    [(q) => q.get("x".repeat(513)), R, /^id\b/],
    [(q) => q.pending(null), T, /^options\b/],
    [(q) => q.pending({ limit: 0 }), R, /^options\.limit\b/],
    [(q) => q.pending({ limit: 1001 }), R, /^options\.limit\b/],
    [(q) => q.pending({ limit: "5" }), T, /^options\.limit\b/],
    [(q) => q.pending({ after: 5 }), T, /^options\.after\b/],
    [(q) => q.pending({ after: "not a cursor" }), R, /^options\.after\b/],
    [(q) => q.pending({ lmit: 5 }), T, /\blmit\b/],
    [(q) => q.inFlight({ limit: 0 }), R, /^options\.limit\b/],
    [(q) => q.inFlight({ after: 5 }), T, /^options\.after\b/],
    [(q) => q.inFlight({ lmit: 5 }), T, /\blmit\b/],
  ]);
  await q.close();
  for (const call of [() => q.get("kept"), () => q.pending(), () => q.inFlight(), () => q.pause(), () => q.resume()]) {
    await assert.rejects(call(), { name: "ClosedError" }, call.toString());
  }
});

// ---- arguments ---------------------------------------------------------------------------------

/** Rows [call, error name, what the message names]: each must reject (not throw) and change nothing. */
function badCalls() {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const T = "TypeError";
  const R = "RangeError";
  const rows = [
    // offer
    [(q) => q.offer(undefined, 10), T, /^value\b/],
    [(q) => q.offer("x", "10"), T, /^delayMs\b/],
    [(q) => q.offer("x"), T, /^delayMs\b/],
    [(q) => q.offer("x", Number.NaN), R, /^delayMs\b/],
    [(q) => q.offer("x", Infinity), R, /^delayMs\b/],
    [(q) => q.offer("x", 10, null), T, /^options\b/],
    [(q) => q.offer("x", 10, 5), T, /^options\b/],
    [(q) => q.offer("x", 10, revoked.proxy), T, /^options\b/],
    [(q) => q.offer("x", 10, { idd: "a" }), T, /\bidd\b/],
    [(q) => q.offer("x", 10, { id: 5 }), T, /^options\.id\b/],
    [(q) => q.offer("x", 10, { id: "" }), R, /^options\.id\b/],
    [(q) => q.offer("x", 10, { id: "x".repeat(513) }), R, /^options\.id\b/],
    [(q) => q.offer("x", 10, { id: "\uD800" }), R, /^options\.id\b/],
    [(q) => q.offer("x", 10, { ifExists: "merge" }), R, /^options\.ifExists\b/],
    [(q) => q.offer("x", 10, { ifExists: true }), T, /^options\.ifExists\b/],
    // offerAt
    [(q) => q.offerAt(undefined, 0), T, /^value\b/],
    [(q) => q.offerAt("x", "soon"), T, /^deadline\b/],
    [(q) => q.offerAt("x"), T, /^deadline\b/],
    [(q) => q.offerAt("x", Number.NaN), R, /^deadline\b/],
    [(q) => q.offerAt("x", new Date(Number.NaN)), R, /^deadline\b/],
    [(q) => q.offerAt("x", 0, { when: 1 }), T, /\bwhen\b/],
    [(q) => q.offerAt("x", 0, { ifExists: "skip" }), R, /^options\.ifExists\b/],
    // offerMany
    [(q) => q.offerMany(), T, /^items\b/],
    [(q) => q.offerMany("x"), T, /^items\b/],
    [(q) => q.offerMany([5]), T, /^items\[0\]/],
    [(q) => q.offerMany([{ value: 1 }]), T, /^items\[0\]/],
    [(q) => q.offerMany([{ value: 1, delayMs: 1, deadline: 1 }]), T, /^items\[0\]/],
    [(q) => q.offerMany([{ value: 1, delayMs: "1" }]), T, /^items\[0\]\.delayMs\b/],
    [(q) => q.offerMany([{ value: 1, deadline: Number.NaN }]), R, /^items\[0\]\.deadline\b/],
    [(q) => q.offerMany([{ value: 1, delayMs: 1, delay: 5 }]), T, /\bdelay\b/],
    [(q) => q.offerMany([{ value: 1, delayMs: 1, id: 5 }]), T, /^items\[0\]\.id\b/],
    [(q) => q.offerMany([{ value: 1, delayMs: 1, ifExists: "x" }]), R, /^items\[0\]\.ifExists\b/],
    // by id
    [(q) => q.cancel(5), T, /^id\b/],
    [(q) => q.cancel(), T, /^id\b/],
    [(q) => q.cancel(""), R, /^id\b/],
    [(q) => q.reschedule(5, 10), T, /^id\b/],
    [(q) => q.reschedule("kept", "10"), T, /^delayMs\b/],
    [(q) => q.reschedule("kept", Number.NaN), R, /^delayMs\b/],
    [(q) => q.delayOf(5), T, /^id\b/],
    [(q) => q.delayOf("\uDC00"), R, /^id\b/],
    [(q) => q.retryDead(5), T, /^id\b/],
    [(q) => q.retryDead(""), R, /^id\b/],
    // deadLetters
    [(q) => q.deadLetters(null), T, /^options\b/],
    [(q) => q.deadLetters({ limit: 0 }), R, /^options\.limit\b/],
    [(q) => q.deadLetters({ limit: 1001 }), R, /^options\.limit\b/],
    [(q) => q.deadLetters({ limit: 1.5 }), R, /^options\.limit\b/],
    [(q) => q.deadLetters({ limit: "5" }), T, /^options\.limit\b/],
    [(q) => q.deadLetters({ after: 5 }), T, /^options\.after\b/],
    [(q) => q.deadLetters({ after: "not a cursor" }), R, /^options\.after\b/],
    [(q) => q.deadLetters({ lmit: 5 }), T, /\blmit\b/],
  ];
  return rows;
}

/** Runs `rows` against `q`: each call returns a Promise that rejects as the row says, and the engine's state stays. */
async function checkBadCalls(e, q, rows) {
  const problems = [];
  for (const [call, name, names] of rows) {
    const label = call.toString().replace(/^\(q\) => /, "");
    const before = await e.state(q);
    let result;
    try {
      result = call(q);
    } catch (error) {
      problems.push(`${label}: threw synchronously (${error?.name}: ${error?.message}), instead of rejecting`);
      continue;
    }
    if (typeof result?.then !== "function") {
      problems.push(`${label}: returned ${String(result)}, not a Promise`);
      continue;
    }
    try {
      await result;
      problems.push(`${label}: resolved, instead of rejecting with a ${name}`);
    } catch (error) {
      if (!(error instanceof Error) || error.name !== name || !names.test(error.message)) {
        problems.push(`${label}: rejected with ${error?.name}: ${error?.message}; wanted a ${name} naming ${names}`);
      }
    }
    const after = await e.state(q);
    try {
      assert.deepEqual(after, before);
    } catch {
      problems.push(`${label}: changed the queue`);
    }
  }
  assert.deepEqual(problems, [], `${problems.length} of ${rows.length} bad calls:\n${problems.join("\n")}`);
}

test("bad arguments reject with a TypeError or RangeError that names them (unknown options too), and change nothing", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["gone"]);
  await q.offer({ kept: true }, HOUR, { id: "kept" });
  await checkBadCalls(e, q, badCalls());
});

test("bad arguments to deleteDead and purgeDead reject likewise, and change nothing", async (e) => {
  const q = await e.open({ maxAttempts: 1 });
  await bury(e, q, ["gone"]);
  await checkBadCalls(e, q, [
    [(q) => q.deleteDead(5), "TypeError", /^id\b/],
    [(q) => q.deleteDead(""), "RangeError", /^id\b/],
    [(q) => q.purgeDead(null), "TypeError", /^options\b/],
    [(q) => q.purgeDead({ olderThan: "1" }), "TypeError", /^options\.olderThan\b/],
    [(q) => q.purgeDead({ olderThan: Number.NaN }), "RangeError", /^options\.olderThan\b/],
    [(q) => q.purgeDead({ olderThan: -1 }), "RangeError", /^options\.olderThan\b/],
    [(q) => q.purgeDead({ older: 1 }), "TypeError", /\bolder\b/],
  ]);
});

test("close(): every later call rejects with ClosedError", async (e) => {
  const q = await e.open();
  await q.offer("x", HOUR, { id: "x" });
  await q.close();
  await q.close();
  const calls = [
    () => q.offer("y", 1),
    () => q.offerAt("y", 0),
    () => q.offerMany([{ value: "y", delayMs: 1 }]),
    () => q.cancel("x"),
    () => q.reschedule("x", 1),
    () => q.delayOf("x"),
    () => q.size(),
    () => q.stats(),
    () => q.deadLetters(),
    () => q.retryDead("x"),
  ];
  for (const call of calls) await assert.rejects(call(), { name: "ClosedError" }, call.toString());
});

// ---- schedules (schedule-cases.mjs) ---------------------------------------------------------

scheduleCases(test, { consume, checkBadCalls, HOUR, sleep });
