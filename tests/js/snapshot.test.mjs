// Snapshots against the built package: round trips, refusals, malformed input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DelayQueue } from "tarry-queue";

const root = fileURLToPath(new URL("../..", import.meta.url));

const _sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const LATE_MS = 2000;

/** Everything `q` holds, in order, taken out by waiting (so no item is early). */
async function takeAll(q, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push({ value: await q.take(), at: Date.now() });
  return out;
}

test("round trip through JSON.stringify: same items, same order, FIFO ties, deadlines in epoch ms", async () => {
  const q = new DelayQueue();
  const start = Date.now();
  q.offerAt({ id: "tie-0", tags: ["a", "b"], nested: { n: 1.5, ok: true, none: null } }, start + 80);
  q.offer("overdue-2", -30);
  q.offerAt("tie-1", start + 80);
  q.offer(7, 40);
  q.offer("overdue-1", -60);
  q.offerAt("tie-2", start + 80);
  const before = q.toArray();
  const snap = q.snapshot();
  assert.equal(q.size, 6, "the queue is unchanged");
  assert.deepEqual(q.toArray(), before);
  assert.equal(snap.version, 1);
  assert.equal(snap.size, 6);
  assert.deepEqual(
    snap.items.map((i) => i.value),
    before,
  );
  for (let i = 1; i < snap.items.length; i++) assert.ok(snap.items[i - 1].deadline <= snap.items[i].deadline);
  for (const { deadline } of snap.items) assert.ok(Number.isInteger(deadline));
  // offerAt(start + 80) comes back as that wall-clock time: never earlier, and later only
  // by clock resolution (Date.now() has 1 ms) and preemption between clock reads.
  for (const i of [3, 4, 5]) {
    const d = snap.items[i].deadline - (start + 80);
    assert.ok(d >= 0 && d <= 20, `deadline off by ${d} ms`);
  }

  const text = JSON.stringify(snap);
  q.close(); // the process "restarts"
  const r = DelayQueue.restore(JSON.parse(text));
  assert.equal(r.size, 6);
  assert.deepEqual(r.toArray(), before);
  const got = await takeAll(r, 6);
  assert.deepEqual(
    got.map((g) => g.value),
    before,
  );
  const parsed = JSON.parse(text);
  got.forEach((g, i) => {
    assert.ok(
      g.at >= parsed.items[i].deadline,
      `item ${i} came ${parsed.items[i].deadline - g.at} ms before its deadline`,
    );
    assert.ok(g.at - Math.max(parsed.items[i].deadline, start) < LATE_MS + 100);
  });
  r.close();
});

test("restore: overdue items first, in deadline order, whatever the array order; FIFO ties kept", () => {
  const now = Date.now();
  const snap = {
    version: 1,
    size: 7,
    items: [
      { value: "future", deadline: now + 60_000 },
      { value: "late-b1", deadline: now - 500 },
      { value: "late-a", deadline: now - 1000 },
      { value: "late-b2", deadline: now - 500 },
      { value: "late-c", deadline: now - 1 },
      { value: "late-b3", deadline: now - 500 },
      { value: "sooner", deadline: now + 30_000 },
    ],
  };
  const q = DelayQueue.restore(snap);
  assert.deepEqual(q.drain(), ["late-a", "late-b1", "late-b2", "late-b3", "late-c"]);
  assert.equal(q.poll(), undefined, "nothing else is due");
  assert.deepEqual(q.toArray(), ["sooner", "future"]);
  q.close();
});

test("restored items are never early and reach a waiting take() in order", async () => {
  const q = new DelayQueue();
  for (let i = 0; i < 20; i++) q.offer(i, 10 + (i % 5) * 10); // ties at 10, 20, …, 50 ms
  const expected = q.toArray();
  const snap = JSON.parse(JSON.stringify(q.snapshot()));
  q.close();
  const r = DelayQueue.restore(snap, { capacity: 20 });
  assert.equal(r.remainingCapacity, 0);
  const got = await takeAll(r, 20);
  assert.deepEqual(
    got.map((g) => g.value),
    expected,
  );
  for (const [i, g] of got.entries()) assert.ok(g.at >= snap.items[i].deadline, `item ${i} early`);
  r.close();
});

test("values JSON cannot carry are refused, naming the item's position; the queue is unchanged", () => {
  class Point {
    constructor() {
      this.x = 1;
    }
  }
  const cyclic = { a: {} };
  cyclic.a.back = cyclic;
  const bad = [
    [() => 1, /items\[1\].*value is a function/],
    [Symbol("s"), /items\[1\].*value is a symbol/],
    [10n, /items\[1\].*value is a bigint/],
    [{ n: NaN }, /items\[1\].*value\.n is NaN/],
    [[1, Infinity], /items\[1\].*value\[1\] is Infinity/],
    [{ when: new Date(0) }, /items\[1\].*value\.when is a Date/],
    [new Map(), /items\[1\].*value is a Map/],
    [{ deep: [{ p: new Point() }] }, /items\[1\].*value\.deep\[0\]\.p is a Point/],
    [cyclic, /items\[1\].*value\.a\.back refers back to itself/],
    [[1, undefined], /items\[1\].*value\[1\] is undefined/],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what this case tests
    [[1, , 3], /items\[1\].*value\[1\] is a hole/],
    [{ "odd key": 1n }, /items\[1\].*value\["odd key"\] is a bigint/],
  ];
  for (const [value, message] of bad) {
    const q = new DelayQueue();
    // Far enough ahead that none is due by the poll() below, on a loaded machine too.
    q.offer("first", 10_000);
    q.offer(value, 20_000);
    q.offer("third", 30_000);
    const before = q.toArray();
    assert.throws(
      () => q.snapshot(),
      (e) => e instanceof TypeError && message.test(e.message),
      String(message),
    );
    assert.equal(q.size, 3);
    assert.deepEqual(q.toArray(), before);
    assert.equal(q.poll(), undefined);
    q.close();
  }
  // What JSON carries faithfully is accepted, including undefined properties (left out).
  const q = new DelayQueue();
  q.offer({ s: "x", n: -0.5, b: false, z: null, a: [[]], o: Object.create(null), u: undefined }, 1);
  assert.deepEqual(q.snapshot().items[0].value.a, [[]]);
  q.close();
});

test("malformed snapshots give a clear error and never a queue", () => {
  const ok = (items) => ({ version: 1, size: items.length, items });
  const item = { value: "v", deadline: Date.now() };
  const cases = [
    ["not an object", null, TypeError, /a snapshot must be an object \{ version, size, items \}, got null/],
    ["a string", "{}", TypeError, /a snapshot must be an object .*, got string/],
    ["no version", { size: 0, items: [] }, TypeError, /missing field `version`/],
    ["wrong version", { version: 2, size: 0, items: [] }, TypeError, /unsupported snapshot version 2/],
    [
      "version as text",
      { version: "1", size: 0, items: [] },
      TypeError,
      /invalid version: string "1", expected the number 1/,
    ],
    ["no size", { version: 1, items: [] }, TypeError, /missing field `size`/],
    ["no items", { version: 1, size: 0 }, TypeError, /missing field `items`/],
    [
      "items not an array",
      { version: 1, size: 1, items: { 0: item } },
      TypeError,
      /invalid items: an object, expected an array/,
    ],
    ["items a string", { version: 1, size: 1, items: "x" }, TypeError, /invalid items: string, expected an array/],
    [
      "items a Set",
      { version: 1, size: 1, items: new Set([item]) },
      TypeError,
      /invalid items: a Set, expected an array/,
    ],
    [
      "an error late in a long array",
      ok([...Array(999).fill(item), { value: 1, deadline: "x" }]),
      TypeError,
      /items\[999\]\.deadline/,
    ],
    [
      "missing deadline",
      ok([item, { value: 1 }]),
      TypeError,
      /items\[1\]\.deadline must be a finite number of epoch milliseconds, got nothing/,
    ],
    ["missing value", ok([item, item, { deadline: 5 }]), TypeError, /items\[2\]\.value is missing/],
    ["undefined value", ok([{ value: undefined, deadline: 5 }]), TypeError, /items\[0\]\.value is undefined/],
    [
      "deadline as text",
      ok([item, { value: 1, deadline: "1767225600000" }]),
      TypeError,
      /items\[1\]\.deadline must be a finite number of epoch milliseconds, got string "1767225600000"/,
    ],
    ["NaN deadline", ok([{ value: 1, deadline: NaN }]), TypeError, /items\[0\]\.deadline must be a finite number.*NaN/],
    [
      "infinite deadline",
      ok([{ value: 1, deadline: -Infinity }]),
      TypeError,
      /items\[0\]\.deadline must be a finite.*-Infinity/,
    ],
    [
      "a Date deadline",
      ok([{ value: 1, deadline: new Date() }]),
      TypeError,
      /items\[0\]\.deadline must be .*, got a Date/,
    ],
    [
      "an item that is null",
      ok([item, null]),
      TypeError,
      /items\[1\] must be an object \{ value, deadline \}, got null/,
    ],
    [
      "truncated array",
      { version: 1, size: 5, items: [item, item, item] },
      TypeError,
      /truncated: it says it holds 5 items and has 3/,
    ],
    [
      "size not a count",
      { version: 1, size: -1, items: [] },
      TypeError,
      /invalid size: number "-1", expected a count of items/,
    ],
    [
      "huge sparse array",
      { version: 1, size: 2 ** 32 - 1, items: new Array(2 ** 32 - 1) },
      RangeError,
      /holds 4294967295 items, more than tarry restores at once/,
    ],
    [
      "sparse array",
      // biome-ignore lint/suspicious/noSparseArray: the hole is what this case tests
      { version: 1, size: 3, items: [item, , item] },
      TypeError,
      /items\[1\] must be an object \{ value, deadline \}, got undefined/,
    ], // eslint-disable-line no-sparse-arrays
  ];
  for (const [name, snap, Kind, message] of cases) {
    const t0 = performance.now();
    let queue;
    assert.throws(
      () => (queue = DelayQueue.restore(snap)),
      (e) => e instanceof Kind && e.message.startsWith("DelayQueue.restore(): ") && message.test(e.message),
      name,
    );
    assert.equal(queue, undefined);
    assert.ok(performance.now() - t0 < 1000, `${name}: refused in ${performance.now() - t0} ms`);
  }
  // More items than a bounded queue holds: refused before anything is built.
  const three = ok([item, item, item]);
  assert.throws(
    () => DelayQueue.restore(three, { capacity: 2 }),
    (e) => e instanceof RangeError && /holds 3 items, more than the queue's capacity \(2\)/.test(e.message),
  );
  assert.equal(DelayQueue.restore(three, { capacity: 3 }).size, 3);
});

test("a large snapshot: 200k items round-trip in order (timings reported)", (t) => {
  const n = 200_000;
  const q = new DelayQueue();
  const base = 1_000_000;
  for (let i = 0; i < n; i++) q.offer({ i }, base + ((i * 7919) % 1000)); // 1000 distinct deadlines, many ties
  let t0 = performance.now();
  const snap = q.snapshot();
  const snapMs = performance.now() - t0;
  const text = JSON.stringify(snap);
  t0 = performance.now();
  const r = DelayQueue.restore(JSON.parse(text));
  const restoreMs = performance.now() - t0;
  t.diagnostic(
    `snapshot ${n} items: ${snapMs.toFixed(0)} ms (${((snapMs * 1e6) / n).toFixed(0)} ns/item); JSON ${(text.length / 1e6).toFixed(1)} MB; parse + restore ${restoreMs.toFixed(0)} ms`,
  );
  assert.equal(r.size, n);
  const a = q.toArray();
  const b = r.toArray();
  assert.equal(b.length, n);
  for (let i = 0; i < n; i++) if (a[i].i !== b[i].i) assert.fail(`position ${i}: ${a[i].i} != ${b[i].i}`);
  q.close();
  r.close();
});

test("snapshot and restore after close throw ClosedError / work independently", () => {
  const q = new DelayQueue();
  q.offer(1, 1);
  q.close();
  assert.throws(() => q.snapshot(), { name: "ClosedError" });
  const r = DelayQueue.restore({ version: 1, size: 0, items: [] }, { keepAlive: false });
  assert.equal(r.size, 0);
  assert.throws(() => DelayQueue.restore({ version: 1, size: 0, items: [] }, { capacity: 0 }), RangeError);
  r.close();
});

test("cancel on payment across a restart: the order's id survives snapshot() and restore() in a new process", () => {
  const dir = mkdtempSync(join(tmpdir(), "tarry-restart-"));
  const file = join(dir, "orders.json");
  const node = (code) => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: root,
      encoding: "utf8",
      timeout: 20_000,
      env: { ...process.env, ORDERS: file },
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim().split("\n");
  };
  try {
    // The first process takes three orders, each to be cancelled unless paid within 30
    // minutes, keeps only their ids (the handles mean nothing after a restart), and stops.
    const first = node(`import { DelayQueue } from "tarry-queue";
      import { writeFileSync } from "node:fs";
      const unpaid = new DelayQueue();
      for (const orderId of [41, 42, 43]) unpaid.offer({ orderId }, 30 * 60_000, { id: "order:" + orderId });
      unpaid.offer({ note: "no id" }, 30 * 60_000);
      writeFileSync(process.env.ORDERS, JSON.stringify(unpaid.snapshot()));
      console.log(unpaid.size);`);
    assert.deepEqual(first, ["4"]);
    // The next process restores them; order 42 is paid: cancel it by its id. Order 43 gets
    // more time; order 41 is still due in about 30 minutes.
    const second = node(`import { DelayQueue } from "tarry-queue";
      import { readFileSync, writeFileSync } from "node:fs";
      const unpaid = DelayQueue.restore(JSON.parse(readFileSync(process.env.ORDERS, "utf8")));
      console.log(JSON.stringify(unpaid.cancel("order:42")));
      console.log(unpaid.cancel("order:42"), unpaid.size);
      console.log(unpaid.reschedule("order:43", 60 * 60_000));
      const left = unpaid.delayOf("order:41");
      console.log(left > 29 * 60_000 && left <= 30 * 60_000);
      writeFileSync(process.env.ORDERS, JSON.stringify(unpaid.snapshot()));`);
    assert.deepEqual(second, ['{"orderId":42}', "undefined 3", "true", "true"]);
    // And a third: what the second kept, ids and all.
    const third = node(`import { DelayQueue } from "tarry-queue";
      import { readFileSync } from "node:fs";
      const snap = JSON.parse(readFileSync(process.env.ORDERS, "utf8"));
      console.log(JSON.stringify(snap.items.map((i) => i.id ?? null)));
      const unpaid = DelayQueue.restore(snap);
      console.log(unpaid.delayOf("order:43") > 59 * 60_000, JSON.stringify(unpaid.cancel("order:41")), unpaid.size);`);
    assert.deepEqual(third, ['["order:41",null,"order:43"]', 'true {"orderId":41} 2']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("ids in snapshots: kept on the items that have one, all different, checked at restore", () => {
  const q = new DelayQueue();
  q.offer("a", 60_000, { id: "A" });
  q.offer("b", 30_000);
  q.offerAt("c", Date.now() + 90_000, { id: "C" });
  const snap = q.snapshot();
  assert.deepEqual(
    snap.items.map((i) => Object.keys(i)),
    [
      ["value", "deadline"],
      ["id", "value", "deadline"],
      ["id", "value", "deadline"],
    ],
    "no id key on an item without one: a snapshot of a queue without ids is as before",
  );
  const r = DelayQueue.restore(JSON.parse(JSON.stringify(snap)));
  assert.deepEqual(r.toArray(), ["b", "a", "c"]);
  assert.equal(r.cancel("C"), "c");
  // A restored id is an id like any other: offering it again replaces its item.
  r.offer("a2", 1_000, { id: "A" });
  assert.deepEqual(r.toArray(), ["a2", "b"]);
  const ok = (items) => ({ version: 1, size: items.length, items });
  for (const [label, bad, message] of [
    ["id 5", ok([{ id: 5, value: 1, deadline: 1 }]), /items\[0\]\.id must be a string, got number 5/],
    ["empty id", ok([{ id: "", value: 1, deadline: 1 }]), /items\[0\]\.id must not be empty/],
    ["long id", ok([{ id: "x".repeat(513), value: 1, deadline: 1 }]), /items\[0\]\.id must be at most 512/],
    [
      "one id twice",
      ok([
        { id: "k", value: 1, deadline: 1 },
        { value: 2, deadline: 2 },
        { id: "k", value: 3, deadline: 3 },
      ]),
      /items\[2\]\.id string "k" is also the id of items\[0\]/,
    ],
  ]) {
    assert.throws(
      () => DelayQueue.restore(bad),
      (e) => e instanceof TypeError && message.test(e.message),
      label,
    );
  }
  q.close();
  r.close();
});

test("restore() refuses what snapshot() refuses: functions and cycles", () => {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  for (const value of [() => 1, cyclic, { nested: [1, () => 2] }]) {
    const snap = { version: 1, size: 1, items: [{ value, deadline: Date.now() }] };
    assert.throws(
      () => DelayQueue.restore(snap),
      (e) => e instanceof TypeError && /items\[0\]\.value/.test(e.message),
    );
  }
});

test("snapshot() of a deeply nested value gives a clear error or a snapshot, never a stack overflow", () => {
  let deep = { leaf: () => 0 };
  for (let i = 0; i < 200_000; i++) deep = { d: deep };
  const q = new DelayQueue();
  q.offer(deep, 1000);
  assert.throws(
    () => q.snapshot(),
    (e) => e instanceof TypeError && /items\[0\]/.test(e.message),
  );
  q.close();
});

test("toArray() and snapshot() keep FIFO between deadlines -0 and 0, as take() does (-0 went first)", async () => {
  // A clock that reads -0 (a fake one, say) and a delay of -0 give the deadline -0.
  const q = new DelayQueue({ clock: () => -0 });
  q.offer("first", 0); // deadline -0 + 0 = 0
  q.offer("second", -0); // deadline -0 + -0 = -0: equal, so it queues behind
  assert.deepEqual(q.toArray(), ["first", "second"]);
  assert.deepEqual(
    q.snapshot().items.map((i) => i.value),
    ["first", "second"],
  );
  assert.deepEqual([await q.take(), await q.take()], ["first", "second"]);
  q.close();
});

test("restore(): a bad version or size of any kind gets the decoder's TypeError, and none of its code runs", () => {
  let deep = [1];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  let called = 0;
  const hostile = {
    toString() {
      called++;
      return "1";
    },
  };
  const bads = { "a null-prototype object": Object.create(null), "a revoked Proxy": revoked, "a deep array": deep };
  Object.assign(bads, { "a toString": hostile, "a Symbol.toPrimitive": { [Symbol.toPrimitive]: () => 1 } });
  for (const [what, bad] of Object.entries(bads)) {
    for (const [field, snapshot] of [
      ["version", { version: bad, size: 0, items: [] }],
      ["size", { version: 1, size: bad, items: [] }],
    ]) {
      assert.throws(
        () => DelayQueue.restore(snapshot),
        (e) => e instanceof TypeError && e.message.startsWith("DelayQueue.restore():") && e.message.includes(field),
        `${field}: ${what}`,
      );
    }
  }
  assert.equal(called, 0, "toString of the input is not called");
});

test("restore() reads the items' length once: one that grows after the check cannot build half a queue", () => {
  const real = [1, 2, 3, 4, 5].map((value) => ({ value, deadline: 1 }));
  let reads = 0;
  // 1 when the capacity is checked, 5 afterwards.
  const items = new Proxy(real, {
    get: (t, k, r) => (k === "length" ? (reads++ === 0 ? 1 : 5) : Reflect.get(t, k, r)),
  });
  let q;
  try {
    q = DelayQueue.restore({ version: 1, size: 5, items }, { capacity: 2 });
  } catch (e) {
    assert.ok(e instanceof TypeError || e instanceof RangeError, String(e));
    assert.match(e.message, /^DelayQueue\.restore\(\)/);
    return;
  }
  const size = q.size;
  q.close();
  assert.fail(`restored ${size} of the 5 items it read, with no error`);
});
