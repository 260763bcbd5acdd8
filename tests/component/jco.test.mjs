// The WebAssembly component from JS, as a component host would run it: `jco transpile`
// (npm @bytecodealliance/jco-transpile) turns target/wasm-component/tarry.wasm into an ES
// module over @bytecodealliance/preview2-shim, whose wasi:clocks pollables block Node's
// thread for real. scripts/setup-component.sh installs both under target/wasm-component/jco.
// (JS apps use the npm package; this checks the component itself from a second host.)
// Time is real: "never early" is asserted exactly against process.hrtime (the clock the
// shim's monotonic-clock reads), lateness with wide margins.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dir = join(root, "target/wasm-component");
const jco = join(dir, "jco");
const LATE_MS = 1000; // generous: the machine is shared

const { transpileBytes } = await import(
  pathToFileURL(join(jco, "node_modules/@bytecodealliance/jco-transpile/dist/index.js"))
);
// Transpiling parses and validates the component; the core wasm it emits is compiled by V8 on import.
const { files, imports, exports } = await transpileBytes(readFileSync(join(dir, "tarry.wasm")), { name: "tarry" });
const out = join(jco, "tarry");
rmSync(out, { recursive: true, force: true });
for (const [name, bytes] of Object.entries(files)) {
  mkdirSync(dirname(join(out, name)), { recursive: true });
  writeFileSync(join(out, name), bytes);
}
const { queue } = await import(pathToFileURL(join(out, "tarry.js")));
const { DelayQueue } = queue;

const bytes = (s) => new TextEncoder().encode(s);
const text = (item) => new TextDecoder().decode(item.payload);
const now = () => Number(process.hrtime.bigint()) / 1e6;
/** What a refusal throws: the WIT `error` variant as jco lifts it. */
const invalid = (startsWith) => (e) => e.tag === "invalid-argument" && e.val.startsWith(startsWith);

test("transpiles to a module that exports tarry:queue/queue and imports only WASI shims", () => {
  assert.deepEqual(exports, [
    ["queue", "instance"],
    ["tarry:queue/queue@0.1.0", "instance"],
  ]);
  assert.ok(imports.length > 0 && imports.every((i) => i.startsWith("@bytecodealliance/preview2-shim/")), imports);
  assert.ok(imports.includes("@bytecodealliance/preview2-shim/clocks"));
});

test("take returns items in deadline order, FIFO among ties, never early", () => {
  const q = new DelayQueue();
  const start = now();
  const base = q.now();
  for (const [payload, ms] of [
    ["c", 60],
    ["a1", 20],
    ["b", 40],
    ["a2", 20],
    ["a3", 20],
  ]) {
    q.offerAt(bytes(payload), base + ms);
  }
  const taken = [];
  while (q.len() > 0) {
    const item = q.take(5000);
    const elapsed = now() - start;
    assert.ok(elapsed >= item.deadlineMs - base, `${text(item)} came ${item.deadlineMs - base - elapsed} ms early`);
    assert.ok(elapsed < item.deadlineMs - base + LATE_MS);
    taken.push(text(item));
  }
  assert.deepEqual(taken, ["a1", "a2", "a3", "b", "c"]);
  // At most one pollable per distinct deadline (fewer when a deadline passed before take was
  // called), plus a new one after each early wake: never a polling loop.
  const { wakes, earlyWakes } = q.stats();
  assert.ok(wakes - earlyWakes <= 3n, `${wakes} wakes, ${earlyWakes} early`);
});

test("take blocks until the head is due, and returns undefined at its timeout keeping the item", () => {
  const q = new DelayQueue();
  let start = now();
  q.offer(bytes("later"), 60_000);
  q.offer(bytes("soon"), 80);
  assert.equal(text(q.take(5000)), "soon");
  let waited = now() - start;
  assert.ok(waited >= 80 && waited < 80 + LATE_MS, `waited ${waited} ms`);

  start = now();
  assert.equal(q.take(50), undefined);
  waited = now() - start;
  assert.ok(waited >= 50 && waited < 50 + LATE_MS, `waited ${waited} ms`);
  assert.equal(q.len(), 1);
  assert.equal(text(q.peek()), "later");
});

test("cancel and reschedule by handle; stale handles name nothing", () => {
  const q = new DelayQueue();
  const a = q.offer(bytes("a"), -1);
  const b = q.offer(bytes("b"), 0);
  const c = q.offer(bytes("c"), 60_000);
  assert.equal(typeof a, "bigint");
  assert.equal(text({ payload: q.cancel(a) }), "a");
  assert.equal(q.cancel(a), undefined);
  assert.equal(q.reschedule(a, 0), false);
  assert.equal(q.delayOf(a), undefined);
  const d = q.offer(bytes("d"), 0); // reuses a's slot under a new handle
  assert.notEqual(d, a);
  assert.equal(q.cancel(a), undefined);
  assert.equal(q.cancel(2n ** 64n - 1n), undefined);
  // c moves to the front; b, moved onto the deadline d already has, queues behind d.
  const base = q.now();
  assert.equal(q.rescheduleAt(c, base - 1000), true);
  assert.equal(q.rescheduleAt(d, base - 500), true);
  assert.equal(q.rescheduleAt(b, base - 500), true);
  assert.deepEqual(q.drainExpired(10).map(text), ["c", "d", "b"]);
});

test("poll, peek, nextDeadline, drainExpired, len and clear", () => {
  const q = new DelayQueue();
  assert.equal(q.poll(), undefined);
  assert.equal(q.nextDeadline(), undefined);
  for (let i = 0; i < 5; i++) q.offer(new Uint8Array([i]), -5 + i);
  const late = q.offer(bytes("late"), 60_000);
  assert.deepEqual(q.peek().payload, new Uint8Array([0]));
  assert.deepEqual(q.poll().payload, new Uint8Array([0]));
  assert.deepEqual(
    q.drainExpired(2).map((i) => i.payload),
    [new Uint8Array([1]), new Uint8Array([2])],
  );
  assert.equal(q.len(), 3);
  const delay = q.delayOf(late);
  assert.ok(delay > 50_000 && delay <= 60_000, `${delay}`);
  assert.equal(q.nextDeadline(), q.peek().deadlineMs);
  q.clear();
  assert.deepEqual([q.len(), q.cancel(late), q.peek()], [0, undefined, undefined]);
});

test("bad input throws the error variant, naming the argument, and changes nothing", () => {
  const q = new DelayQueue();
  const h = q.offer(bytes("kept"), 60_000);
  assert.throws(() => q.offer(bytes("x"), Number.NaN), {
    tag: "invalid-argument",
    val: "delay-ms must be a finite number of milliseconds, got NaN",
  });
  assert.throws(() => q.offer(bytes("x"), Number.POSITIVE_INFINITY), invalid("delay-ms must be a finite number"));
  assert.throws(() => q.offerAt(bytes("x"), Number.NEGATIVE_INFINITY), invalid("deadline-ms must be a finite"));
  assert.throws(() => q.reschedule(h, Number.NaN), invalid("delay-ms must be a finite number"));
  assert.throws(() => q.rescheduleAt(h, Number.POSITIVE_INFINITY), invalid("deadline-ms must be a finite"));
  assert.throws(() => q.take(-1), invalid("timeout-ms must not be negative"));
  assert.throws(() => q.take(Number.NaN), invalid("timeout-ms must be a number of milliseconds, got NaN"));
  assert.throws(() => new DelayQueue().take(Number.POSITIVE_INFINITY), invalid("timeout-ms is infinite and the queue"));
  assert.throws(() => DelayQueue.bounded(0), invalid("capacity must be between 1 and 67108864 (2^26"));
  assert.throws(() => DelayQueue.bounded(2 ** 26 + 1), invalid("capacity must be between 1 and 67108864 (2^26"));
  assert.throws(() => DelayQueue.bounded(2 ** 31 - 1), invalid("capacity must be between 1 and 67108864 (2^26"));
  DelayQueue.bounded(2 ** 26); // the core's limit itself is a capacity
  assert.equal(q.len(), 1);
  assert.equal(text({ payload: q.cancel(h) }), "kept");

  const bounded = DelayQueue.bounded(1);
  bounded.offer(bytes("a"), 0);
  assert.throws(() => bounded.offer(bytes("b"), 0), { tag: "full", val: 1 });
  assert.equal(bounded.len(), 1);
});
