// The lateness histogram of the engines outside the wasm (js/engine/lateness.js, behind
// tarry-queue/redis's stats) against the core's (src/lateness.rs, behind `stats` in memory):
// the same samples give the same p50, p99 and max, so both engines' figures mean the same.

import { test } from "node:test";
import assert from "node:assert/strict";
import "tarry-queue"; // loads the wasm
import { Lateness } from "../../js/engine/lateness.js";
import { Deadlines } from "../../js/wasm.js";

/**
 * The core's figures for these lateness samples, recorded by the binding's own takeDue, and
 * js/engine/lateness.js's for the same samples (as the binding computes them: now - deadline).
 */
function figures(samples) {
  const d = new Deadlines(Number.POSITIVE_INFINITY);
  const l = new Lateness();
  let now = 0;
  for (const ms of samples) {
    now += 1e7; // the binding's clock only moves forward
    const deadline = now - ms;
    d.offer(deadline);
    assert.ok(d.takeDue(now) >= 0);
    l.record(now - deadline);
  }
  // wakes, early wakes, delivered, then the lateness p50, p99 and max (src/binding/mod.rs).
  const [, , , p50, p99, max] = d.figures();
  d.free();
  return { core: [p50, p99, max], js: [l.quantile(0.5), l.quantile(0.99), l.max] };
}

/** A seeded generator, so that a failure replays. */
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test("js/engine/lateness.js gives the core's p50, p99 and max for the same samples", () => {
  const rnd = random(18);
  const sets = {
    none: [],
    one: [3.2],
    "sub-millisecond": Array.from({ length: 500 }, () => rnd()),
    "a long tail": Array.from({ length: 5000 }, () => (rnd() < 0.98 ? rnd() * 4 : 50 + rnd() * 5000)),
    "octave edges": [1, 2, 4, 8, 1024, 2 ** 20, 0.999, 1.999, 3.999],
    zero: [0, 0, 0.5],
    // Few buckets, recorded out of order (kept as a list), and one more than that list holds.
    "few, out of order": [900, 3, 0.2, 3, 45, 0.9, 7000, 12, 3, 0.2, 150, 2.5],
    "16 buckets": Array.from({ length: 16 }, (_, i) => 2 ** (15 - i)),
    "17 buckets": Array.from({ length: 34 }, (_, i) => 2 ** (i % 17)),
  };
  for (const [what, samples] of Object.entries(sets)) {
    const { core, js } = figures(samples);
    assert.deepEqual(js, core, what);
  }
});

test("js/engine/lateness.js counts a negative lateness as 0, as the core does", () => {
  const l = new Lateness();
  for (const ms of [-5, -0.1, Number.NaN]) l.record(ms);
  // Each in the first bucket, whose middle is above the max (0): the max.
  assert.deepEqual([l.count, l.quantile(0.5), l.quantile(0.99), l.max], [3, 0, 0, 0]);
});
