// tarry against what users would pick instead, side by side: the implementations of
// bench/impls.mjs, each measurement in a fresh process (bench/child.mjs) so that memory,
// JIT state and garbage never mix; rounds interleave the implementations (rotating their
// order) and summaries are medians, because a shared 2-core machine is noisy. Java's
// DelayQueue runs in one JVM with its own rounds (bench/java/DelayQueueBench.java).

import { rotate } from "./cli.mjs";
import { IMPLS, JS_IMPLS } from "./impls.mjs";
import { median, pow10 } from "./numbers.mjs";
import { javaChild, nodeChild } from "./processes.mjs";

export const OPS = ["offer", "offerMany", "cancel", "drain", "drainBatch"];
/** What an offer costs besides time (bench/child.mjs offerCost): JS heap bytes, calls into wasm. */
const COSTS = ["offerHeapBytes", "offerWasmCalls"];

/** Runs every round; returns { js: samples per implementation, java: Java's output or null }. */
export async function measureComparison(c, log) {
  const js = Object.fromEntries(
    JS_IMPLS.map((id) => [
      id,
      {
        ...Object.fromEntries([...OPS, ...COSTS].map((k) => [k, {}])),
        mem: {},
        churn: [],
        expiry: [],
        ordered: true,
      },
    ]),
  );
  for (let r = 0; r < c.memRounds; r++) {
    for (const n of c.sizes) {
      for (const id of rotate(JS_IMPLS, r)) {
        log(`round ${r + 1}/${c.memRounds} memory N=${pow10(n)} ${id}`);
        (js[id].mem[n] ??= []).push((await nodeChild("mem", id, [n])).bytesPerItem);
      }
    }
  }
  for (let r = 0; r < c.rounds; r++) {
    for (const n of c.sizes) {
      for (const id of rotate(JS_IMPLS, r)) {
        log(`round ${r + 1}/${c.rounds} offer/cancel/drain N=${pow10(n)} ${id}`);
        const o = await nodeChild("ops", id, [n]);
        for (const k of OPS) (js[id][k][n] ??= []).push(o[k]);
        (js[id].offerHeapBytes[n] ??= []).push(o.offerCost.heapBytes);
        (js[id].offerWasmCalls[n] ??= []).push(o.offerCost.wasmCalls);
        if (id !== "setTimeout") js[id].ordered &&= o.ordered;
      }
    }
    if (r < c.churnRounds) {
      for (const id of rotate(JS_IMPLS, r)) {
        log(`round ${r + 1}/${c.churnRounds} churn ${id}`);
        js[id].churn.push((await nodeChild("churn", id, [c.churn.pending, c.churn.steps])).churn);
      }
    }
    if (r < c.expiryRounds) {
      for (const id of rotate(JS_IMPLS, r)) {
        log(`round ${r + 1}/${c.expiryRounds} timed expiry ${id}`);
        js[id].expiry.push(await nodeChild("expiry", id, [c.expiry.n, c.expiry.from, c.expiry.to]));
      }
    }
  }
  let java = null;
  if (c.java) {
    log(`java.util.concurrent.DelayQueue, N=${c.sizes.map(pow10).join(",")}`);
    try {
      java = await javaChild([c.sizes.join(","), String(c.rounds), String(c.churn.pending), String(c.churn.steps)]);
    } catch (e) {
      log(`java skipped: ${e.message.split("\n")[0]}`);
    }
  }
  return { js, java };
}

/** Medians: summary[id][metric][n] (churn and expiry are not per N). */
export function summariseComparison(c, { js, java }) {
  const summary = {};
  for (const id of JS_IMPLS) {
    const s = (summary[id] = {});
    for (const k of [...OPS, ...COSTS, "mem"]) s[k] = Object.fromEntries(c.sizes.map((n) => [n, median(js[id][k][n])]));
    s.churn = median(js[id].churn);
    const ex = js[id].expiry;
    s.expiry = {
      p50: median(ex.map((e) => e.p50)),
      p99: median(ex.map((e) => e.p99)),
      max: median(ex.map((e) => e.max)),
      early: Math.max(...ex.map((e) => e.early)),
      maybeEarly: Math.max(...ex.map((e) => e.maybeEarly)),
      ordered: ex.every((e) => e.ordered),
      inversions: Math.max(...ex.map((e) => e.inversions)),
      timerArms: median(ex.map((e) => e.timerArms)),
      wakes: median(ex.map((e) => e.wakes)),
    };
    s.ordered = js[id].ordered;
  }
  if (java) {
    const per = (k) => Object.fromEntries(c.sizes.map((n) => [n, java[k] ? median(java[k][n]) : null]));
    summary.java = {
      offer: per("offer"),
      cancel: per("cancel"),
      drain: per("drain"),
      drainBatch: per("drainBatch"),
      offerMany: per("offerMany"),
      mem: java.mem,
      churn: median(java.churn),
      ordered: c.sizes.every((n) => java.drain[n].every((x) => x !== null)),
    };
  }
  return summary;
}

/**
 * offer() alone (bench/child.mjs offer) for `--only offer`: each implementation at each N
 * in a fresh process, rounds interleaved with the order rotated. Returns the table's lines:
 * medians of ops/s, the ratio to the last implementation (the plain-JS heap), and the
 * JS heap bytes and calls into wasm per offer.
 */
export async function measureOffers({ sizes, rounds, impls }, log) {
  const got = {};
  for (let r = 0; r < rounds; r++) {
    for (const n of sizes) {
      for (const id of rotate(impls, r)) {
        log(`round ${r + 1}/${rounds} offer N=${pow10(n)} ${id}`);
        ((got[id] ??= {})[n] ??= []).push(await nodeChild("offer", id, [n]));
      }
    }
  }
  const peer = impls[impls.length - 1];
  const lines = [
    `| N | ${impls.map((id) => `${IMPLS[id].label}, offers/s`).join(" | ")} | ratio | heap B/offer | wasm calls/offer |`,
  ];
  lines.push(`| --- |${impls.map(() => " ---: |").join("")} ---: | ---: | ---: |`);
  for (const n of sizes) {
    const rate = (id) => median(got[id][n].map((x) => x.offer));
    const cost = (k) => impls.map((i) => median(got[i][n].map((x) => x.offerCost[k])).toFixed(1)).join(" / ");
    const rates = impls.map((id) => `${(rate(id) / 1e6).toFixed(2)}M`).join(" | ");
    const samples = got[impls[0]][n].map((x) => (x.offer / 1e6).toFixed(2)).join(", ");
    lines.push(
      `| ${pow10(n)} | ${rates} | ×${(rate(impls[0]) / rate(peer)).toFixed(2)} | ${cost("heapBytes")} | ${cost("wasmCalls")} |`,
    );
    log(
      `N=${pow10(n)} ${impls[0]} samples: ${samples}; ${peer}: ${got[peer][n].map((x) => (x.offer / 1e6).toFixed(2)).join(", ")}`,
    );
  }
  return lines.join("\n");
}

export const LABELS = { ...Object.fromEntries(JS_IMPLS.map((id) => [id, IMPLS[id].label])), java: "Java DelayQueue" };
