// Where tarry's time per operation goes, layer by layer: the JS face (js/memory/queue.js) over
// the wasm binding's Deadlines (dist/tarry.js) over the core, against the plain-JS heap peer.
// A diagnostic for whoever optimises the core, not part of the table:
//
//   node bench/profile.mjs [N ...]      (default 10^5 and 10^6)
//
// Rows, in ns per operation (best of 5 runs, each on a fresh queue of N items due in
// [1 h, 2 h]):
//   performance.now()            the host clock alone
//   Deadlines#size               one exported call that does nothing (the boundary floor)
//   Deadlines#offer(deadline)    insert, no clock read
//   Deadlines#offer(now + delay) insert with a performance.now() read in JS per item
//   DelayQueue#offer             the JS face: argument checks, clock, Deadlines#offer, the slot table
//   DelayQueue#offer with { id } / DelayQueue#cancel(id): the same, naming items by ids (a
//                                string each, made before the clock starts) and cancelling by them
//   Deadlines#cancel / DelayQueue#cancel, Deadlines#poll / DelayQueue#poll: likewise
//   plain-JS heap offer/cancel/poll: bench/peers/indexed-heap.mjs behind its wrapper
//   churn step at N pending (cancel one, offer one) for Deadlines, DelayQueue and the JS heap

import { DelayQueue, init } from "tarry-queue";
import { Deadlines } from "../dist/tarry.js";
import { HeapDelayQueue } from "./peers/indexed-heap.mjs";
import { rng } from "./rng.mjs";

// The glue is loaded by the package's first queue or by init(); Deadlines is used before either.
await init();

const HOUR = 3_600_000;
const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
if (sizes.length === 0) sizes.push(1e5, 1e6);

function best(runs, f) {
  let min = Infinity;
  for (let r = 0; r < runs; r++) min = Math.min(min, f());
  return min;
}

function profile(n) {
  const r = rng(1);
  const delays = new Float64Array(n).map(() => HOUR + r() * HOUR);
  const past = new Float64Array(n).map(() => -HOUR - r() * HOUR);
  const victims = new Int32Array(n >> 1).map(() => Math.floor(r() * n));
  // Distinct victims are not needed for cost: a repeated one finds nothing after a first cancel,
  // which is rare at n/2 draws from n; the rate is per call either way.
  const rows = [];
  const time = (name, f) => rows.push([name, best(5, f)]);

  time("performance.now()", () => {
    let x = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) x += performance.now();
    return (performance.now() - t0 - (x === 0 ? 1 : 0)) / n;
  });
  time("Deadlines#size (an empty boundary crossing)", () => {
    const c = new Deadlines(Infinity);
    let x = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) x += c.size;
    const ns = (performance.now() - t0 - (x === 1 ? 1 : 0)) / n;
    c.free();
    return ns;
  });
  const coreRun = (useDeadline, then) => {
    const c = new Deadlines(Infinity);
    const hs = new Float64Array(n);
    const base = performance.now();
    const t0 = performance.now();
    if (useDeadline) for (let i = 0; i < n; i++) hs[i] = c.offer(base + delays[i]);
    else for (let i = 0; i < n; i++) hs[i] = c.offer(performance.now() + delays[i]);
    const t1 = performance.now();
    const out = then ? then(c, hs) : (t1 - t0) / n;
    c.free();
    return out;
  };
  time("Deadlines#offer(deadline): no clock read", () => coreRun(true));
  time("Deadlines#offer(now + delay): clock read in JS", () => coreRun(false));
  time("DelayQueue#offer (JS face)", () => {
    const q = new DelayQueue();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) q.offer(i, delays[i]);
    const ns = (performance.now() - t0) / n;
    q.close();
    return ns;
  });
  const ids = Array.from({ length: n }, (_, i) => `order:${i}`);
  time("DelayQueue#offer with { id }", () => {
    const q = new DelayQueue();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) q.offer(i, delays[i], { id: ids[i] });
    const ns = (performance.now() - t0) / n;
    q.close();
    return ns;
  });
  time("plain-JS heap offer", () => {
    const q = new HeapDelayQueue();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) q.offer(i, delays[i]);
    return (performance.now() - t0) / n;
  });
  time("Deadlines#cancel", () =>
    coreRun(true, (c, hs) => {
      const t0 = performance.now();
      for (let k = 0; k < victims.length; k++) c.cancel(hs[victims[k]]);
      return (performance.now() - t0) / victims.length;
    }),
  );
  time("DelayQueue#cancel (JS face)", () => {
    const q = new DelayQueue();
    const hs = new Float64Array(n);
    for (let i = 0; i < n; i++) hs[i] = q.offer(i, delays[i]);
    const t0 = performance.now();
    for (let k = 0; k < victims.length; k++) q.cancel(hs[victims[k]]);
    const ns = (performance.now() - t0) / victims.length;
    q.close();
    return ns;
  });
  time("DelayQueue#cancel(id)", () => {
    const q = new DelayQueue();
    for (let i = 0; i < n; i++) q.offer(i, delays[i], { id: ids[i] });
    const t0 = performance.now();
    for (let k = 0; k < victims.length; k++) q.cancel(ids[victims[k]]);
    const ns = (performance.now() - t0) / victims.length;
    q.close();
    return ns;
  });
  time("plain-JS heap cancel", () => {
    const q = new HeapDelayQueue();
    const hs = new Float64Array(n);
    for (let i = 0; i < n; i++) hs[i] = q.offer(i, delays[i]);
    const t0 = performance.now();
    for (let k = 0; k < victims.length; k++) q.cancel(hs[victims[k]]);
    return (performance.now() - t0) / victims.length;
  });
  time("Deadlines#poll (all due)", () => {
    const c = new Deadlines(Infinity);
    const now = performance.now();
    for (let i = 0; i < n; i++) c.offer(now + past[i]);
    const t0 = performance.now();
    while (c.poll(t0) >= 0);
    const ns = (performance.now() - t0) / n;
    c.free();
    return ns;
  });
  time("DelayQueue#poll (JS face)", () => {
    const q = new DelayQueue();
    for (let i = 0; i < n; i++) q.offer(i, past[i]);
    const t0 = performance.now();
    while (q.poll() !== undefined);
    const ns = (performance.now() - t0) / n;
    q.close();
    return ns;
  });
  time("plain-JS heap poll", () => {
    const q = new HeapDelayQueue();
    for (let i = 0; i < n; i++) q.offer(i, past[i]);
    const t0 = performance.now();
    while (q.poll() !== undefined);
    return (performance.now() - t0) / n;
  });
  // Churn at n pending: offer one, cancel a random one (ns per step).
  const steps = 200_000;
  const fresh = new Float64Array(steps).map(() => HOUR + r() * HOUR);
  const picks = new Int32Array(steps).map(() => Math.floor(r() * n));
  const churn = (fill, step, done) => () => {
    const hs = new Float64Array(n);
    const q = fill(hs);
    const t0 = performance.now();
    for (let k = 0; k < steps; k++) {
      const v = picks[k];
      hs[v] = step(q, k, hs[v]);
    }
    const ns = (performance.now() - t0) / steps;
    done(q);
    return ns;
  };
  time(
    "Deadlines churn step: offer + cancel",
    churn(
      (hs) => {
        const c = new Deadlines(Infinity);
        for (let i = 0; i < n; i++) hs[i] = c.offer(performance.now() + delays[i]);
        return c;
      },
      (c, k, h) => (c.cancel(h), c.offer(performance.now() + fresh[k])),
      (c) => c.free(),
    ),
  );
  time(
    "DelayQueue churn step (JS face)",
    churn(
      (hs) => {
        const q = new DelayQueue();
        for (let i = 0; i < n; i++) hs[i] = q.offer(i, delays[i]);
        return q;
      },
      (q, k, h) => (q.cancel(h), q.offer(k, fresh[k])),
      (q) => q.close(),
    ),
  );
  time(
    "plain-JS heap churn step",
    churn(
      (hs) => {
        const q = new HeapDelayQueue();
        for (let i = 0; i < n; i++) hs[i] = q.offer(i, delays[i]);
        return q;
      },
      (q, k, h) => (q.cancel(h), q.offer(k, fresh[k])),
      () => {},
    ),
  );
  return rows;
}

for (const n of sizes) {
  console.log(`\nN = ${n.toLocaleString("en")}: ns per operation (best of 5)\n`);
  console.log("| layer | ns/op |\n| --- | ---: |");
  for (const [name, ns] of profile(n)) console.log(`| ${name} | ${(ns * 1e6).toFixed(1)} |`);
}
