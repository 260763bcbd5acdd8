// One measurement in a fresh process (bench/run.mjs starts it with --expose-gc), so that
// JIT state, garbage and memory of one implementation never mix with another's.
//
//   node --expose-gc bench/child.mjs <task> <impl> [n] [extra]
//
// Tasks: mem (bytes per pending item), ops (offer, cancel, drain at N), offer (offer alone
// at N, for `--only offer`), churn, expiry,
// growth (bench/growth.mjs: cost per block of 10^6 operations up to N, with full GCs).
// Prints one JSON line. Every workload uses the same seeded random numbers for every
// implementation.

import { join } from "node:path";
import { pathToFileURL } from "node:url";
import v8 from "node:v8";
import { growth } from "./workloads/growth.mjs";
import { IMPLS } from "./impls.mjs";
import { median } from "./numbers.mjs";
import { rng, sample, uniform } from "./rng.mjs";
import { fullGcs, memoryInUse } from "./runtimes/node.mjs";

const HOUR = 3_600_000;
const now = () => performance.now();

/** Counts definite order inversions: a before b although a's deadline is surely later. */
function inversions(order, count, lo, hi) {
  let bad = 0;
  for (let k = 1; k < count; k++) if (lo[order[k - 1]] > hi[order[k]]) bad++;
  return bad;
}

/** Checks that `order[0..count)` holds each of 0..n-1 once. */
function complete(order, count, n) {
  if (count !== n) return false;
  const seen = new Uint8Array(n);
  for (let k = 0; k < count; k++) {
    const v = order[k];
    if (!(v >= 0 && v < n) || seen[v]) return false;
    seen[v] = 1;
  }
  return true;
}

// --- tasks ---------------------------------------------------------------------------

async function mem(make, n) {
  const delays = uniform(n, HOUR, 2 * HOUR, 1);
  const before = await memoryInUse();
  const q = make();
  for (let i = 0; i < n; i++) q.offer(i, delays[i]);
  const after = await memoryInUse();
  // Both stay alive until both readings are taken: a collected `delays` would take its
  // 8 bytes per item off the second reading.
  if (q.size !== n || delays.length !== n) throw new Error(`size ${q.size} after ${n} offers`);
  return { bytesPerItem: (after - before) / n };
}

/** Offers n items due in [1 h, 2 h], then cancels n/2 random ones. Times in ms. */
function offerCancel(make, n, delays, victims) {
  const q = make();
  const handles = new Array(n);
  const t0 = now();
  for (let i = 0; i < n; i++) handles[i] = q.offer(i, delays[i]);
  const t1 = now();
  let missed = 0;
  for (let k = 0; k < victims.length; k++) if (q.cancel(handles[victims[k]]) === undefined) missed++;
  const t2 = now();
  if (missed !== 0) throw new Error(`${missed} cancels found nothing`);
  if (q.size !== n - victims.length) throw new Error(`size ${q.size} after cancels`);
  q.close?.();
  return { offer: t1 - t0, cancel: t2 - t1 };
}

/** One offerMany(values, delays) call of n items, where the implementation has it. */
function offerMany(make, n, delays) {
  const q = make();
  if (typeof q.offerMany !== "function") return null;
  const values = Array.from({ length: n }, (_, i) => i);
  const t0 = now();
  q.offerMany(values, delays);
  const t1 = now();
  if (q.size !== n) throw new Error(`size ${q.size} after offerMany of ${n}`);
  q.close?.();
  return t1 - t0;
}

/**
 * Offers item i due in delays[i] for every i; each deadline lies in [lo[i], hi[i]], the
 * clock read just before and just after its offer.
 */
function offerBounded(q, delays) {
  const n = delays.length;
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    lo[i] = now() + delays[i];
    q.offer(i, delays[i]);
    hi[i] = now() + delays[i];
  }
  return { lo, hi };
}

/** n already-expired items taken with poll() (or one drain() when batch). */
function drain(make, n, delays, batch) {
  const q = make();
  const { lo, hi } = offerBounded(q, delays);
  const order = new Int32Array(n);
  let count = 0;
  let t0, t1;
  if (batch) {
    t0 = now();
    const out = q.drain();
    t1 = now();
    for (const v of out) order[count++] = v;
  } else {
    t0 = now();
    for (let v; (v = q.poll()) !== undefined; ) order[count++] = v;
    t1 = now();
  }
  q.close?.();
  return { ms: t1 - t0, ordered: complete(order, count, n) && inversions(order, count, lo, hi) === 0 };
}

/**
 * setTimeout has no poll(): its "drain" is the event loop firing n timers that are all
 * already due (each timer set for 0–5 ms, then the thread is kept busy for 10 ms).
 */
async function drainTimers(make, n) {
  const q = make();
  const delays = uniform(n, 0, 5, 4);
  const { lo, hi } = offerBounded(q, delays);
  const spin = now() + 10;
  while (now() < spin);
  const order = new Int32Array(n);
  let count = 0;
  const t0 = now();
  while (count < n) {
    const v = await q.take();
    order[count++] = v;
  }
  const t1 = now();
  // Node orders timers by whole milliseconds: allow 1 ms before calling it an inversion.
  const hi1 = hi.map((x) => x + 1);
  return { ms: t1 - t0, ordered: complete(order, count, n) && inversions(order, count, lo, hi1) === 0 };
}

/**
 * Calls into wasm while `f` runs: tarry's wasm-bindgen glue (dist/tarry.js, the module
 * tarry-queue loads) makes one call into wasm per method or getter, so each is wrapped with
 * a counter for the while. 0 for an implementation without wasm.
 */
async function wasmCalls(implId, f) {
  if (implId !== "tarry") {
    f();
    return 0;
  }
  // The glue of the build being measured: this tree's, or TARRY_ROOT's (bench/calls/root.mjs).
  const glue = process.env.TARRY_ROOT
    ? pathToFileURL(join(process.env.TARRY_ROOT, "dist/tarry.js")).href
    : "../dist/tarry.js";
  const { Deadlines } = await import(glue);
  const proto = Deadlines.prototype;
  const saved = Object.getOwnPropertyDescriptors(proto);
  let calls = 0;
  for (const [name, d] of Object.entries(saved)) {
    if (name === "constructor") continue;
    const counted = (g) =>
      function (...args) {
        calls++;
        return g.apply(this, args);
      };
    if (typeof d.value === "function") Object.defineProperty(proto, name, { ...d, value: counted(d.value) });
    else if (d.get) Object.defineProperty(proto, name, { ...d, get: counted(d.get) });
  }
  try {
    f();
  } finally {
    for (const [name, d] of Object.entries(saved)) Object.defineProperty(proto, name, d);
  }
  return calls;
}

/**
 * What one offer costs besides its time, at N pending: bytes allocated on the JS heap and
 * calls into wasm. Bytes: N offered, the last 5 windows of N/10 (at most 1000) cancelled,
 * then offered again window by window, each after a full GC, and the heap's growth read (no
 * scavenge fits in so few bytes); the slots freed are reused, so no array grows and what is
 * left is what each offer allocates itself. Median of the 5 windows.
 */
async function offerCost(make, implId, n, delays) {
  const window = Math.min(1000, Math.floor(n / 10));
  // The loop optimised first, as the timed one is: unoptimised code boxes numbers itself.
  warm(() => {
    const scratch = make();
    offerRange(scratch, 0, window, delays, []);
    scratch.close?.();
  });
  const q = make();
  const handles = new Array(n);
  offerRange(q, 0, n, delays, handles);
  const start = n - 5 * window;
  for (let i = start; i < n; i++) q.cancel(handles[i]);
  const bytes = [];
  for (let from = start; from < n; from += window) {
    globalThis.gc();
    const before = heapUsed();
    offerRange(q, from, from + window, delays, handles);
    bytes.push((heapUsed() - before) / window);
  }
  const calls = await wasmCalls(implId, () => q.cancel(q.offer(-1, delays[0])));
  q.close?.();
  return { heapBytes: median(bytes), wasmCalls: calls / 2 };
}

/** Offers items from..to-1, item i due in delays[i], its handle in handles[i]. */
function offerRange(q, from, to, delays, handles) {
  for (let i = from; i < to; i++) handles[i] = q.offer(i, delays[i]);
}

/** Bytes in use on the JS heap, every space. */
const heapUsed = () => v8.getHeapSpaceStatistics().reduce((s, x) => s + x.space_used_size, 0);

/** Runs `f` at least twice and for at least `ms` milliseconds. */
function warm(f, ms = 200) {
  const end = now() + ms;
  for (let i = 0; i < 2 || now() < end; i++) f();
}

async function ops(make, n, isTimeouts, implId) {
  const delays = uniform(n, HOUR, 2 * HOUR, 1);
  const past = uniform(n, -2 * HOUR, -HOUR, 2);
  const victims = sample(n, n >> 1, rng(3));
  // Warm-up at 10^4 for a while, so that the JIT (and V8's wasm tier-up, which starts
  // every wasm function in a baseline compiler) has done its work before measuring.
  const w = Math.min(n, 10_000);
  const wv = sample(w, w >> 1, rng(5));
  warm(() => {
    offerCancel(make, w, delays.subarray(0, w), wv);
    if (!isTimeouts) {
      drain(make, w, past.subarray(0, w), false);
      drain(make, w, past.subarray(0, w), true);
      offerMany(make, w, delays.subarray(0, w));
    }
  });
  // Repeat and keep the median: small N finishes in a millisecond, and at any N the first
  // pass pays for growing the arrays (and the wasm memory) that later passes reuse.
  const reps = Math.max(3, Math.floor(300_000 / n));
  const offer = [];
  const cancel = [];
  const poll = [];
  const batch = [];
  const many = [];
  let ordered = true;
  for (let r = 0; r < reps; r++) {
    const oc = offerCancel(make, n, delays, victims);
    offer.push(oc.offer);
    cancel.push(oc.cancel);
    if (isTimeouts) {
      // Firing 10^6 timers takes seconds: fewer passes for this row.
      if (r < (n >= 1e6 ? 1 : 3)) {
        const d = await drainTimers(make, n);
        poll.push(d.ms);
        ordered &&= d.ordered;
      }
    } else {
      const d = drain(make, n, past, false);
      poll.push(d.ms);
      ordered &&= d.ordered;
      const b = drain(make, n, past, true);
      batch.push(b.ms);
      ordered &&= b.ordered;
      const m = offerMany(make, n, delays);
      if (m !== null) many.push(m);
    }
  }
  const rate = (count, ms) => (count / ms) * 1000;
  return {
    offer: rate(n, median(offer)),
    cancel: rate(n >> 1, median(cancel)),
    drain: rate(n, median(poll)),
    drainBatch: batch.length ? rate(n, median(batch)) : null,
    offerMany: many.length ? rate(n, median(many)) : null,
    offerCost: await offerCost(make, implId, n, delays),
    ordered,
    reps,
  };
}

/** offer() alone: n items into an empty queue, the median of repeated passes, and its costs. */
async function offers(make, n, implId) {
  const delays = uniform(n, HOUR, 2 * HOUR, 1);
  const w = Math.min(n, 10_000);
  warm(() => offerOnly(make, w, delays));
  const reps = Math.max(5, Math.floor(1_000_000 / n));
  const ms = [];
  for (let r = 0; r < reps; r++) ms.push(offerOnly(make, n, delays));
  return { offer: (n / median(ms)) * 1000, offerCost: await offerCost(make, implId, n, delays), reps };
}

/** Offers n items due in delays[0..n) to a new queue; the time it took in ms. */
function offerOnly(make, n, delays) {
  const q = make();
  const handles = new Array(n);
  const t0 = now();
  offerRange(q, 0, n, delays, handles);
  const t1 = now();
  if (q.size !== n) throw new Error(`size ${q.size} after ${n} offers`);
  q.close?.();
  return t1 - t0;
}

async function churn(make, pending, steps) {
  const run = (p, s, seed) => {
    const q = make();
    const delays = uniform(p + s, HOUR, 2 * HOUR, seed);
    const r = rng(seed + 1);
    const victims = new Int32Array(s);
    for (let k = 0; k < s; k++) victims[k] = Math.floor(r() * p);
    const handles = new Array(p);
    for (let i = 0; i < p; i++) handles[i] = q.offer(i, delays[i]);
    let missed = 0;
    const t0 = now();
    for (let k = 0; k < s; k++) {
      const h = q.offer(p + k, delays[p + k]);
      const v = victims[k];
      if (q.cancel(handles[v]) === undefined) missed++;
      handles[v] = h;
    }
    const t1 = now();
    if (missed !== 0) throw new Error(`${missed} cancels found nothing`);
    if (q.size !== p) throw new Error(`size ${q.size} after churn`);
    q.close?.();
    return t1 - t0;
  };
  warm(() => run(Math.min(pending, 10_000), Math.min(steps, 50_000), 10));
  const ms = run(pending, steps, 20);
  return { churn: (steps / ms) * 1000 };
}

/**
 * n items due within `windowMs`, offered while one consumer awaits take() in a loop.
 * Lateness is measured where the consumer resumes; "early" is a delivery before
 * performance.now() reached the item's deadline (the bound read just before offer(),
 * so an early delivery is certain, never a measuring artefact).
 */
async function expiry(make, n, fromMs, toMs) {
  // Warm the JIT first, so that offering n items takes well under `fromMs`.
  const w = 10_000;
  const wd = uniform(w, HOUR, 2 * HOUR, 8);
  const wv = sample(w, w >> 1, rng(9));
  warm(() => offerCancel(make, w, wd, wv));
  const q = make();
  let arms = 0;
  const hostSetTimeout = globalThis.setTimeout;
  globalThis.setTimeout = function (...args) {
    arms++;
    return hostSetTimeout.apply(this, args);
  };
  const delays = uniform(n, fromMs, toMs, 7);
  const order = new Int32Array(n);
  const at = new Float64Array(n);
  const consumer = (async () => {
    for (let k = 0; k < n; k++) {
      order[k] = await q.take();
      at[k] = now();
    }
  })();
  const t0 = now();
  const { lo, hi } = offerBounded(q, delays);
  const offeredIn = now() - t0;
  await consumer;
  globalThis.setTimeout = hostSetTimeout;
  const lateness = new Float64Array(n);
  let early = 0;
  let maybeEarly = 0;
  for (let k = 0; k < n; k++) {
    const v = order[k];
    if (at[k] < lo[v]) early++;
    if (at[k] < hi[v]) maybeEarly++;
    lateness[k] = at[k] - lo[v];
  }
  lateness.sort();
  const q_ = (p) => lateness[Math.min(n - 1, Math.floor(p * n))];
  const stats = q.stats ?? {};
  q.close?.();
  return {
    p50: q_(0.5),
    p99: q_(0.99),
    max: lateness[n - 1],
    early,
    maybeEarly,
    ordered: complete(order, n, n) && inversions(order, n, lo, hi) === 0,
    inversions: inversions(order, n, lo, hi),
    timerArms: arms,
    ownTimerArms: stats.timerArms ?? null,
    wakes: stats.wakes ?? null,
    earlyWakes: stats.earlyWakes ?? null,
    offeredInMs: offeredIn,
  };
}

// --- main ----------------------------------------------------------------------------

const [task, implId, a, b, c] = process.argv.slice(2);
const impl = IMPLS[implId];
if (!impl) throw new Error(`unknown implementation ${implId}`);
if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const make = await impl.load();
let out;
switch (task) {
  case "mem":
    out = await mem(make, Number(a));
    break;
  case "ops":
    out = await ops(make, Number(a), implId === "setTimeout", implId);
    break;
  case "offer":
    out = await offers(make, Number(a), implId);
    break;
  case "churn":
    out = await churn(make, Number(a), Number(b));
    break;
  case "expiry":
    out = await expiry(make, Number(a), Number(b), Number(c));
    break;
  case "growth": {
    const gcs = fullGcs();
    out = await growth(make, Number(a), { block: Number(b ?? 1e6), memory: memoryInUse });
    out.gcs = await gcs.stop();
    out.runtime = `Node ${process.version}`;
    break;
  }
  default:
    throw new Error(`unknown task ${task}`);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
