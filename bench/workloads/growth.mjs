// The cost-growth workload: how the cost per operation moves as a queue grows to N pending
// items, measured per block of operations (10^6 by default), so that a cost that grows with
// the queue (a full GC per step of memory growth, cache misses) shows as a curve, not as a
// higher average. Runtime-neutral (no Node APIs): Node (bench/child.mjs), Deno
// (bench/runtimes/deno-main.mjs) and a Chromium page (bench/runtimes/page.html) run it.
//
// Phases on one implementation, in order, each timed per block:
//   offer      N items due in [1 h, 2 h] (offer() per item)
//   churn      at N pending: offer one, cancel a random pending one (10^6 steps, or N if fewer)
//   cancel     N/2 distinct random handles
//   drain      N already-due items taken with poll() per item, order checked
//   offerMany  one offerMany() call of N items (where the implementation has one)
//   drainBatch N already-due items taken with one drain() call, order checked
// `memory` (optional) is called before the first offer and after the last one, with the
// queue alive; it returns bytes in use (or null where the runtime cannot say).

import { fill, rng, sample } from "../rng.mjs";

const HOUR = 3_600_000;

/** Resolves after the host's other tasks had a turn (GC finalisation, observers). */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Whether order[0..n) is an expiry order of items 0..n-1 offered with one clock reading:
 * item v is due at that reading + delays[v], so delays must not decrease, equal delays
 * come out in insertion order, and every item comes out once.
 */
function inOrder(order, n, delays) {
  const seen = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const v = order[k];
    if (!(v >= 0 && v < n) || seen[v]) return false;
    seen[v] = 1;
    if (k > 0) {
      const u = order[k - 1];
      if (delays[v] < delays[u] || (delays[v] === delays[u] && v < u)) return false;
    }
  }
  return true;
}

/**
 * Runs the workload. `make()` gives an empty queue with offer, offerMany?, cancel, poll,
 * drain?, size and close?. Returns per phase the blocks as { ops, start, end } on
 * performance.now()'s clock, so that the caller can attribute garbage collections to them.
 */
export async function growth(
  make,
  n,
  { block = 1_000_000, churnSteps = Math.min(n, 1_000_000), memory, warm = true } = {},
) {
  // The same workload, small, first: the JIT (and V8's wasm tier-up) is done before block 1.
  if (warm) await growth(make, Math.min(n, 20_000), { block: 10_000, warm: false });
  const r = rng(12);
  const phases = {};
  /** Runs `step(from, ops)` per block of `size`, timed; `prepare(from, ops)` before each, untimed. */
  const timed = async (name, total, step, prepare = () => {}, size = block) => {
    const blocks = (phases[name] = []);
    for (let from = 0; from < total; ) {
      const ops = Math.min(size, total - from);
      prepare(from, ops);
      const start = performance.now();
      step(from, ops);
      const end = performance.now();
      blocks.push({ ops, start, end });
      from += ops;
      await turn();
    }
  };

  // --- offer, churn and cancel on one queue ------------------------------------------------
  const handles = new Float64Array(n);
  const delays = new Float64Array(Math.max(block, 1));
  const picks = new Int32Array(Math.max(block, 1));
  const victims = sample(n, n >> 1, r);
  await turn();
  const before = memory ? await memory() : null;
  let q = make();
  await timed(
    "offer",
    n,
    (from, ops) => {
      for (let k = 0; k < ops; k++) handles[from + k] = q.offer(from + k, delays[k]);
    },
    () => fill(delays, HOUR, 2 * HOUR, r),
  );
  if (q.size !== n) throw new Error(`size ${q.size} after ${n} offers`);
  const after = memory ? await memory() : null;

  let missed = 0;
  await timed(
    "churn",
    churnSteps,
    (from, ops) => {
      for (let k = 0; k < ops; k++) {
        const v = picks[k];
        const h = q.offer(n + from + k, delays[k]);
        if (q.cancel(handles[v]) === undefined) missed++;
        handles[v] = h;
      }
    },
    (_, ops) => {
      fill(delays, HOUR, 2 * HOUR, r);
      for (let k = 0; k < ops; k++) picks[k] = Math.floor(r() * n);
    },
  );
  if (missed !== 0 || q.size !== n) throw new Error(`churn: ${missed} cancels found nothing, size ${q.size}`);

  await timed("cancel", victims.length, (from, ops) => {
    for (let k = from; k < from + ops; k++) if (q.cancel(handles[victims[k]]) === undefined) missed++;
  });
  if (missed !== 0 || q.size !== n - victims.length) throw new Error(`cancel: ${missed} missed, size ${q.size}`);
  q.close?.();
  q = null;

  // --- drains and the batch offer: items due in the past, one clock reading per batch -------
  const values = Array.from({ length: n }, (_, i) => i);
  const past = fill(new Float64Array(n), -2 * HOUR, -HOUR, r);
  const order = new Int32Array(n);
  let ordered = true;

  q = make();
  if (q.offerMany) q.offerMany(values, past);
  else for (let i = 0; i < n; i++) q.offer(i, past[i]);
  await turn();
  await timed("drain", n, (from, ops) => {
    for (let k = from; k < from + ops; k++) order[k] = q.poll();
  });
  ordered &&= inOrder(order, n, past) && q.poll() === undefined;
  q.close?.();

  q = make();
  if (q.offerMany) {
    await timed("offerMany", n, () => q.offerMany(values, past), undefined, n);
    if (q.size !== n) throw new Error(`size ${q.size} after offerMany of ${n}`);
    await turn();
    let out = [];
    await timed(
      "drainBatch",
      n,
      () => {
        out = q.drain();
      },
      undefined,
      n,
    );
    order.set(out.length === n ? out : []);
    ordered &&= out.length === n && inOrder(order, n, past);
  }
  q.close?.();
  q = null;

  const bytesPerItem = before != null && after != null ? (after - before) / n : null;
  return { n, block, churnSteps, phases, ordered, bytesPerItem };
}

/** Per block: ns per operation; per phase: ns per operation over the whole phase. */
export function perOp(phases) {
  const out = {};
  for (const [name, blocks] of Object.entries(phases)) {
    const ops = blocks.reduce((s, b) => s + b.ops, 0);
    const ms = blocks.reduce((s, b) => s + (b.end - b.start), 0);
    out[name] = { ns: (ms * 1e6) / ops, blocks: blocks.map((b) => ((b.end - b.start) * 1e6) / b.ops) };
  }
  return out;
}

/**
 * Attributes full GCs ({ start, duration } on performance.now()'s clock) to the blocks they
 * started in: per phase, { count, ms, blocks: [count per block] }, and the run's total.
 */
export function gcsByBlock(phases, gcs) {
  const out = {};
  for (const [name, blocks] of Object.entries(phases)) {
    const per = blocks.map((b) => gcs.filter((g) => g.start >= b.start && g.start < b.end));
    out[name] = {
      count: per.reduce((s, g) => s + g.length, 0),
      ms: per.flat().reduce((s, g) => s + g.duration, 0),
      blocks: per.map((g) => g.length),
    };
  }
  return out;
}
