// Soak: one DelayQueue holding about 10^6 pending items for minutes, under mixed calls in
// real time: offer, offerMany, cancel, reschedule, poll, drain, several takes waiting at
// once (some with a timeout, some aborted through their signal) and a `for await` loop.
// Every few seconds, after a full GC, it samples memory: the V8 heap, external memory
// (which includes the wasm memory in Node) and the wasm memory itself. It fails if an item
// comes out early (before performance.now() reaches the deadline the soak computed from a
// clock reading taken before the call), if one comes out twice, if the counts do not
// reconcile at the end (offered = delivered + cancelled + pending, and so do two checksums
// of the items' ids), or if memory after the warm-up moves by more than the tolerance.
//
//   node --expose-gc tests/soak/soak.mjs [--seconds 600] [--items 1000000] [--sample 10] [--warmup 60]
//
// `npm run soak` runs 10 minutes (scripts/soak.sh); `npm test` runs 20 seconds.

import { setImmediate as tick } from "node:timers/promises";
import { Random } from "../fuzz/random.mjs";

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
}

const SECONDS = arg("seconds", 600);
const N = arg("items", 1_000_000);
const SAMPLE_S = arg("sample", SECONDS >= 120 ? 10 : 2);
const WARMUP_S = arg("warmup", SECONDS >= 120 ? 60 : 6);
/**
 * Memory after the warm-up may move by this share of its median, or 8 MiB, whichever is more
 * (noise here: about 1 MiB; a leak of one waiter record per aborted take adds 8 MiB in 2 min).
 */
const TOLERANCE = 0.05;
const TOLERANCE_BYTES = 8 * 2 ** 20;

if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc");
  process.exit(2);
}

// The wasm memory, to sample it apart from the rest: the first queue instantiates the module
// with `new WebAssembly.Instance`; watch that one construction.
const RealInstance = WebAssembly.Instance;
let wasmMemory = null;
WebAssembly.Instance = new Proxy(RealInstance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args);
    wasmMemory ??= instance.exports.memory;
    return instance;
  },
});
const { DelayQueue } = await import("tarry-queue");
new DelayQueue().close();
WebAssembly.Instance = RealInstance;
if (!(wasmMemory instanceof WebAssembly.Memory)) throw new Error("could not find the wasm memory");

const r = new Random(0x50a4);
const now = () => performance.now();
const MINUTE = 60_000;

// Two queues: `q` holds the 10^6 items under every kind of call; `side` holds a few, offered
// now and then, so that its takes mostly wait, time out or are aborted.
const q = new DelayQueue();
const side = new DelayQueue();
/** Each queue's pending items, in no order, so that a random one is O(1) to pick and remove. */
const live = [];
const sideLive = [];
/** An item's value: its id, handle, the earliest it may come out, its list and place there. */
function makeValue(id, list = live) {
  return { id, h: 0, at: 0, list, i: -1, out: false };
}

const ops = { offer: 0, offerMany: 0, cancel: 0, reschedule: 0, poll: 0, drain: 0, take: 0, iterate: 0, abort: 0 };
const items = { offered: 0, delivered: 0, cancelled: 0, timedOut: 0, aborted: 0, early: 0, twice: 0 };
// Two checksums of ids (sums modulo 2^32, exact however many), so that one item lost and
// another delivered twice do not cancel out.
const sums = { offered: [0, 0], out: [0, 0] };
const mix = (id) => Math.imul(id ^ (id >>> 15), 0x9e3779b1) >>> 0;
function count(which, id) {
  const s = sums[which];
  s[0] = (s[0] + id) >>> 0;
  s[1] = (s[1] + mix(id)) >>> 0;
}
let nextId = 1;
let problem = null;
const fail = (message) => {
  problem ??= message;
};

/**
 * A delay: some within 50 ms, most within two minutes (due during the run), the rest in an
 * hour or two (the pending bulk). `fill`: for the first 10^6, none within 50 ms (they would
 * all fall due while the rest are offered).
 */
function delay(fill = false) {
  const x = r.float();
  if (x < 0.3 && !fill) return r.float() * 50;
  if (x < 0.7) return r.float() * 2 * MINUTE;
  return 60 * MINUTE + r.float() * 60 * MINUTE;
}

function added(v, at) {
  v.at = at;
  v.i = v.list.length;
  v.list.push(v);
  items.offered++;
  count("offered", v.id);
}

/** An item left the queue: checks it was due and is out once, and forgets it. */
function gone(v, how) {
  if (v.out) {
    items.twice++;
    fail(`item ${v.id} came out twice (${how})`);
    return;
  }
  v.out = true;
  if (how !== "cancel" && now() < v.at) {
    items.early++;
    fail(`item ${v.id} came out ${v.at - now()} ms early (${how})`);
  }
  const last = v.list.pop();
  if (last !== v) {
    v.list[v.i] = last;
    last.i = v.i;
  }
  count("out", v.id);
  if (how === "cancel") items.cancelled++;
  else items.delivered++;
}

function offer() {
  const v = makeValue(nextId++);
  const d = delay();
  const t = now();
  v.h = q.offer(v, d);
  ops.offer++;
  added(v, t + d);
}

/** An item for the side queue's takes, due within 30 ms. */
function offerSide() {
  const v = makeValue(nextId++, sideLive);
  const d = r.float() * 30;
  const t = now();
  v.h = side.offer(v, d);
  ops.offer++;
  added(v, t + d);
}

function offerMany(fill = false) {
  const k = 1 + r.int(64);
  const vs = [];
  const ds = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    vs.push(makeValue(nextId++));
    ds[i] = delay(fill);
  }
  const t = now();
  const hs = q.offerMany(vs, ds);
  ops.offerMany++;
  for (let i = 0; i < k; i++) {
    vs[i].h = hs[i];
    added(vs[i], t + ds[i]);
  }
}

// An item handed to a take within a call is out of the queue before that take's loop runs
// again and forgets it, so cancel() and reschedule() may find it gone: it must then come out
// through a take (the counts at the end tell).
let raced = 0;

function cancel() {
  if (live.length === 0) return;
  const v = live[r.int(live.length)];
  const got = q.cancel(v.h);
  ops.cancel++;
  if (got === v) gone(v, "cancel");
  else if (got === undefined) raced++;
  else fail(`cancel of item ${v.id} returned item ${got?.id}`);
}

function reschedule() {
  if (live.length === 0) return;
  const v = live[r.int(live.length)];
  const d = delay();
  const t = now();
  ops.reschedule++;
  if (q.reschedule(v.h, d)) v.at = t + d;
  else raced++;
}

function poll() {
  const v = q.poll();
  ops.poll++;
  if (v !== undefined) gone(v, "poll");
}

function drain() {
  const out = q.drain(1 + r.int(100));
  ops.drain++;
  for (const v of out) gone(v, "drain");
}

// Takes: 8 loops on each queue, waiting at once; some with a timeout, some with a signal the
// main loop aborts while they wait; and one for-await loop on `q`.
const reason = new Error("aborted by the soak");
/** The controllers of takes waiting now. */
const waiting = new Set();
let running = true;

async function taker(queue, k) {
  while (running) {
    const ctrl = k % 3 === 0 ? new AbortController() : null;
    let v;
    try {
      ops.take++;
      const p = queue.take(ctrl ? { signal: ctrl.signal } : k % 3 === 1 ? { timeout: 1 + r.int(10) } : undefined);
      if (ctrl) waiting.add(ctrl);
      v = await p;
    } catch (e) {
      if (e === reason) {
        items.aborted++;
        continue;
      }
      if (e?.name === "ClosedError") return;
      throw e;
    } finally {
      if (ctrl) waiting.delete(ctrl);
    }
    if (v === undefined) items.timedOut++;
    else gone(v, "take");
  }
}

async function iterate() {
  for await (const v of q) {
    ops.iterate++;
    gone(v, "for await");
    if (!running) return;
  }
}

function abortSome() {
  if (waiting.size === 0) return;
  const ctrl = [...waiting][r.int(waiting.size)];
  waiting.delete(ctrl);
  ctrl.abort(reason);
  ops.abort++;
}

// ---- memory -----------------------------------------------------------------------------

const samples = [];
function sample(t0) {
  globalThis.gc();
  const m = process.memoryUsage();
  const s = {
    t: (now() - t0) / 1000,
    ops: Object.values(ops).reduce((a, b) => a + b, 0),
    size: q.size,
    heap: m.heapUsed,
    external: m.external,
    wasm: wasmMemory.buffer.byteLength,
  };
  s.total = s.heap + s.external;
  samples.push(s);
  const mb = (x) => (x / 2 ** 20).toFixed(1).padStart(7);
  console.log(
    `${s.t.toFixed(0).padStart(5)} s ${String(s.ops).padStart(12)} ops  size ${String(s.size).padStart(8)}  heap ${mb(s.heap)} MiB  external ${mb(s.external)} MiB (wasm ${mb(s.wasm)})  heap+external ${mb(s.total)} MiB`,
  );
}

// ---- the run ----------------------------------------------------------------------------

const t0 = now();
console.log(
  `soak: ${N} pending items for ${SECONDS} s, memory after GC every ${SAMPLE_S} s, flat after ${WARMUP_S} s (Node ${process.versions.node})`,
);
while (q.size < N) offerMany(true);
const loops = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((k) => [taker(q, k), taker(side, k)]);
loops.push(iterate());
sample(t0);
let nextSample = t0 + SAMPLE_S * 1000;
const end = t0 + SECONDS * 1000;
while (now() < end && problem === null) {
  for (let i = 0; i < 2000; i++) {
    // Offers keep the queue at about N; the rest remove, move and take items.
    const x = r.int(100);
    if (x < 25) q.size < N ? offerMany() : cancel();
    else if (x < 35) q.size < N ? offer() : cancel();
    else if (x < 50) cancel();
    else if (x < 70) reschedule();
    else if (x < 85) poll();
    else if (x < 92) drain();
    else abortSome();
  }
  if (r.chance(0.5)) offerSide(); // a trickle: the side queue's takes mostly wait
  await tick(); // lets the timers fire and the takes run
  if (now() >= nextSample) {
    sample(t0);
    nextSample += SAMPLE_S * 1000;
  }
}
running = false;

// Freeze: what is pending, and close (the takes waiting reject), in one synchronous turn.
const pending = [...q.toArray(), ...side.toArray()];
const stats = q.stats;
q.close();
side.close();
await Promise.all(loops);
for (const v of pending) {
  count("out", v.id);
  if (v.out) fail(`item ${v.id} is pending and came out`);
}

// ---- the verdict ------------------------------------------------------------------------

const total = Object.values(ops).reduce((a, b) => a + b, 0);
const after = samples.filter((s) => s.t >= WARMUP_S);
const range = (key) => [Math.min(...after.map((s) => s[key])), Math.max(...after.map((s) => s[key]))];
const mib = (x) => `${(x / 2 ** 20).toFixed(1)} MiB`;
const [lo, hi] = range("total");
const median = after.map((s) => s.total).sort((a, b) => a - b)[after.length >> 1];
const allowed = Math.max(TOLERANCE * median, TOLERANCE_BYTES);
const reconciles =
  items.offered === items.delivered + items.cancelled + pending.length &&
  sums.offered[0] === sums.out[0] &&
  sums.offered[1] === sums.out[1];

console.log(`\n${total} calls in ${((now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(ops)}`);
console.log(
  `items: ${items.offered} offered = ${items.delivered} delivered + ${items.cancelled} cancelled + ${pending.length} pending: ${reconciles ? "reconciles" : "DOES NOT RECONCILE"}`,
);
console.log(
  `takes: ${items.timedOut} timed out, ${items.aborted} aborted; ${raced} cancels or reschedules found an item a take had just got; early ${items.early}, twice ${items.twice}; stats: ${stats.wakes} wakes (${stats.earlyWakes} early), lateness p50 ${stats.latenessP50.toFixed(2)} ms, p99 ${stats.latenessP99.toFixed(2)} ms`,
);
for (const key of ["heap", "external", "wasm", "total"]) {
  const [a, b] = range(key);
  console.log(`memory after ${WARMUP_S} s, ${key === "total" ? "heap+external" : key}: ${mib(a)} – ${mib(b)}`);
}
if (!reconciles) fail("the counts do not reconcile: an item was lost or counted twice");
if (after.length < 2) fail(`only ${after.length} samples after the warm-up`);
else if (hi - lo > allowed) fail(`memory after the warm-up moved by ${mib(hi - lo)}, more than ${mib(allowed)}`);
if (problem !== null) {
  console.log(`FAILED: ${problem}`);
  process.exitCode = 1;
} else {
  console.log(
    `ok: nothing early, nothing twice, nothing lost; memory flat within ${mib(hi - lo)} (allowed ${mib(allowed)})`,
  );
}
