// The cost-growth comparison: bench/workloads/growth.mjs for tarry and the plain-JS heap,
// at each N, in each runtime, every run in a fresh process (or browser), the two
// implementations interleaved. Summaries are medians over rounds: per phase ns per
// operation, per block of operations the curve, and full GCs per phase.

import { gcsByBlock, perOp } from "./workloads/growth.mjs";
import { median } from "./numbers.mjs";
import { NODE24, nodeChild } from "./processes.mjs";
import { growthInChromium } from "./runtimes/chromium.mjs";
import { growthInDeno } from "./runtimes/deno.mjs";

export const GROWTH_IMPLS = ["tarry", "js-heap"];
export const PHASES = ["offer", "cancel", "drain", "churn", "offerMany", "drainBatch"];

/** How to run one growth measurement in each runtime: (impl, n, block) => result. */
export const RUNTIMES = {
  node: (impl, n, block) => nodeChild("growth", impl, [n, block]),
  node24: (impl, n, block) => nodeChild("growth", impl, [n, block], NODE24),
  deno: growthInDeno,
  chromium: growthInChromium,
};

/**
 * Runs the plan: { runtime: [N, ...] }, `rounds` times, the implementations in alternating
 * order. Returns samples[runtime][impl][n] = [run, ...], each run reduced to its figures.
 */
export async function measureGrowth(plan, { rounds, block, log }) {
  const samples = {};
  for (let r = 0; r < rounds; r++) {
    for (const [runtime, sizes] of Object.entries(plan)) {
      for (const n of sizes) {
        const impls = r % 2 ? [...GROWTH_IMPLS].reverse() : GROWTH_IMPLS;
        for (const impl of impls) {
          log(`round ${r + 1}/${rounds} growth ${runtime} N=${n.toLocaleString("en")} ${impl}`);
          const run = await RUNTIMES[runtime](impl, n, Math.min(block, n));
          if (!run.ordered) throw new Error(`${runtime} ${impl} N=${n}: expiry order wrong`);
          ((samples[runtime] ??= {})[impl] ??= {})[n] ??= [];
          samples[runtime][impl][n].push(figures(run));
        }
      }
    }
  }
  return samples;
}

/** One run's figures: ns per op per phase and per block, full GCs per phase and per block. */
function figures(run) {
  const gcs = gcsByBlock(run.phases, run.gcs);
  const all = run.gcs.length;
  return {
    runtime: run.runtime,
    block: run.block,
    bytesPerItem: run.bytesPerItem,
    perOp: perOp(run.phases),
    gcs,
    fullGcs: { count: all, ms: run.gcs.reduce((s, g) => s + g.duration, 0) },
  };
}

/** Medians over rounds: summary[runtime][impl][n] = { phase: { ns, blocks, gcs, gcMs, gcBlocks }, ... }. */
export function summariseGrowth(samples) {
  const out = {};
  for (const [runtime, byImpl] of Object.entries(samples)) {
    for (const [impl, byN] of Object.entries(byImpl)) {
      for (const [n, runs] of Object.entries(byN)) {
        const s = {
          runtime: runs[0].runtime,
          block: runs[0].block,
          bytesPerItem: median(runs.map((x) => x.bytesPerItem)),
        };
        for (const phase of PHASES) {
          const got = runs.filter((x) => x.perOp[phase]);
          if (got.length === 0) continue;
          const blocks = got[0].perOp[phase].blocks.map((_, k) => median(got.map((x) => x.perOp[phase].blocks[k])));
          s[phase] = {
            ns: median(got.map((x) => x.perOp[phase].ns)),
            blocks,
            gcs: median(got.map((x) => x.gcs[phase].count)),
            gcMs: median(got.map((x) => x.gcs[phase].ms)),
            gcBlocks: got[0].gcs[phase].blocks.map((_, k) => median(got.map((x) => x.gcs[phase].blocks[k]))),
          };
        }
        s.fullGcs = { count: median(runs.map((x) => x.fullGcs.count)), ms: median(runs.map((x) => x.fullGcs.ms)) };
        ((out[runtime] ??= {})[impl] ??= {})[n] = s;
      }
    }
  }
  return out;
}
