// The benchmark's results as markdown: the peer comparison, timed expiry, the growth curve
// per runtime, the notes that say how to read them, and the targets, met or not.

import { LABELS } from "./comparison.mjs";
import { GROWTH_IMPLS } from "./growth.mjs";
import { JS_IMPLS } from "./impls.mjs";
import { ns, pow10, short } from "./numbers.mjs";

const times = (r) => (r == null ? "n/a" : `×${r < 10 ? r.toPrecision(3) : r.toFixed(1)}`);

/** How many times tarry is better than `id` in the comparison: faster, or fewer bytes. */
function ratio(summary, metric, id, n) {
  const t = n === undefined ? summary.tarry[metric] : summary.tarry[metric][n];
  const p = n === undefined ? summary[id][metric] : summary[id][metric][n];
  if (!(t > 0 && p > 0)) return null;
  return metric === "mem" || metric === "offerHeapBytes" ? p / t : t / p;
}

export function comparisonTables(c, summary) {
  const ids = Object.keys(summary);
  const cell = (v, r, unit = "") => (v == null ? "–" : `${short(v)}${unit}${r == null ? "" : ` (${times(r)})`}`);
  const lines = [
    `| workload | N | ${ids.map((id) => LABELS[id]).join(" | ")} |`,
    `| --- | --- | ${ids.map(() => "---:").join(" | ")} |`,
  ];
  const row = (name, metric, n, unit = "", compared = true) => {
    const cells = ids.map((id) => {
      const v = n === undefined ? summary[id][metric] : summary[id][metric]?.[n];
      if (!compared) return v == null ? "–" : String(v);
      return cell(v, id === "tarry" ? null : ratio(summary, metric, id, n), unit);
    });
    const size = n === undefined ? `${pow10(c.churn.pending)} + ${pow10(c.churn.steps)}` : pow10(n);
    lines.push(`| ${name} | ${size} | ${cells.join(" | ")} |`);
  };
  for (const n of c.sizes) row("offer, ops/s", "offer", n);
  for (const n of c.sizes) row("offer: JS heap bytes allocated per offer", "offerHeapBytes", n, " B");
  for (const n of c.sizes) row("offer: calls into wasm per offer", "offerWasmCalls", n, "", false);
  for (const n of c.sizes) row("offer: one offerMany() call, items/s", "offerMany", n);
  for (const n of c.sizes) row("cancel, ops/s", "cancel", n);
  for (const n of c.sizes) row("drain: poll() per item, ops/s", "drain", n);
  for (const n of c.sizes) row("drain: one drain() call, items/s", "drainBatch", n);
  for (const n of c.sizes) row("memory, bytes per pending item", "mem", n, " B");
  row("churn: offer + cancel, steps/s", "churn");

  const ex = [
    `| ${c.expiry.n.toLocaleString("en")} items due in [${c.expiry.from}, ${c.expiry.to}) ms | lateness p50 | p99 | max | early | order | host timer arms | timer wakes |`,
    "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
  ];
  for (const id of JS_IMPLS) {
    const e = summary[id].expiry;
    const order = e.ordered ? "exact" : `${e.inversions} inversions`;
    const wakes = e.wakes == null ? "–" : e.wakes.toLocaleString("en");
    ex.push(
      `| ${LABELS[id]} | ${e.p50.toFixed(2)} ms | ${e.p99.toFixed(2)} ms | ${e.max.toFixed(2)} ms | ${e.early} | ${order} | ${e.timerArms.toLocaleString("en")} | ${wakes} |`,
    );
  }
  return `${lines.join("\n")}\n\n${ex.join("\n")}`;
}

const PHASE_LABELS = {
  offer: "offer",
  cancel: "cancel N/2",
  drain: "drain: poll() per item",
  churn: "churn at N pending: offer + cancel",
  offerMany: "one offerMany() call, per item",
  drainBatch: "one drain() call, per item",
};

const gcCell = (p) => (p == null ? "–" : `${p.gcs} (${Math.round(p.gcMs)} ms)`);

/** One table per runtime: ns per operation and full GCs per phase and N, tarry against the plain-JS heap. */
export function growthTables(summary) {
  const out = [];
  for (const byImpl of Object.values(summary)) {
    const [t, h] = GROWTH_IMPLS.map((id) => byImpl[id]);
    const sizes = Object.keys(t).map(Number);
    const name = t[sizes[0]].runtime;
    const lines = [
      `| ${name}: ns per operation | N | tarry | full GCs (time) | plain-JS heap | full GCs (time) |`,
      "| --- | --- | ---: | ---: | ---: | ---: |",
    ];
    for (const phase of Object.keys(PHASE_LABELS)) {
      for (const n of sizes) {
        const a = t[n][phase];
        const b = h[n]?.[phase];
        if (!a) continue;
        const r = b ? b.ns / a.ns : null;
        lines.push(
          `| ${PHASE_LABELS[phase]} | ${pow10(n)} | ${ns(a.ns)} | ${gcCell(a)} | ${b ? `${ns(b.ns)} (${times(r)})` : "–"} | ${gcCell(b)} |`,
        );
      }
    }
    for (const n of sizes) {
      const a = t[n].bytesPerItem;
      const b = h[n]?.bytesPerItem;
      if (a == null) continue;
      lines.push(
        `| memory, bytes per pending item | ${pow10(n)} | ${a.toFixed(1)} B | | ${b == null ? "–" : `${b.toFixed(1)} B (${times(b / a)})`} | |`,
      );
    }
    for (const n of sizes) {
      const a = t[n].fullGcs;
      const b = h[n]?.fullGcs;
      lines.push(
        `| full GCs in the whole run (time) | ${pow10(n)} | ${a.count} (${Math.round(a.ms)} ms) | | ${b ? `${b.count} (${Math.round(b.ms)} ms)` : "–"} | |`,
      );
    }
    out.push(lines.join("\n"));
  }
  return out.join("\n\n");
}

/** Blocks shown in the curve tables (of up to 30). */
const SHOWN = [1, 2, 3, 4, 5, 7, 10, 15, 20, 25, 30];

/** Per runtime, at its largest N: ns per operation per block of 10^6 for offer, cancel and drain. */
export function curveTables(summary) {
  const out = [];
  for (const byImpl of Object.values(summary)) {
    const sizes = Object.keys(byImpl.tarry).map(Number);
    const n = Math.max(...sizes);
    const top = byImpl.tarry[n];
    const blocks = SHOWN.filter((k) => k <= top.offer.blocks.length);
    const lines = [
      `| ${top.runtime}, N = ${pow10(n)}: ns per op in block k of ${pow10(top.block)} ops | ${blocks.map((k) => `k=${k}`).join(" | ")} |`,
      `| --- | ${blocks.map(() => "---:").join(" | ")} |`,
    ];
    for (const phase of ["offer", "cancel", "drain"]) {
      for (const id of GROWTH_IMPLS) {
        const p = byImpl[id][n]?.[phase];
        if (!p) continue;
        const cells = blocks.map((k) => (k <= p.blocks.length ? ns(p.blocks[k - 1]) : ""));
        lines.push(`| ${LABELS[id]}: ${phase} | ${cells.join(" | ")} |`);
      }
    }
    for (const id of GROWTH_IMPLS) {
      const p = byImpl[id][n]?.offer;
      if (p)
        lines.push(
          `| ${LABELS[id]}: full GCs in the offer block | ${blocks.map((k) => p.gcBlocks[k - 1]).join(" | ")} |`,
        );
    }
    out.push(lines.join("\n"));
  }
  return out.join("\n\n");
}

/** Every target with its figure: { what, ok, detail }. */
export function targets(c, summary, growth) {
  const out = [];
  const target = (what, ok, detail) => out.push({ what, ok, detail });
  const tenfold = (r) => r != null && r >= 10;
  if (summary) {
    const n5 = c.sizes.includes(1e5) ? 1e5 : c.sizes.at(-1);
    for (const m of ["offer", "cancel"]) {
      const r = ratio(summary, m, "setTimeout", n5);
      target(`${m} ≥ 10× setTimeout/item at N=${pow10(n5)}`, tenfold(r), times(r));
    }
    const rm = ratio(summary, "mem", "setTimeout", n5);
    target(`memory ≥ 4× less than setTimeout/item at N=${pow10(n5)}`, rm >= 4, times(rm));
    const top = c.sizes.at(-1);
    for (const m of ["offer", "cancel"]) {
      const r = ratio(summary, m, "js-heap", top);
      target(`${m} ≥ 1.5× plain-JS heap at N=${pow10(top)}`, r >= 1.5, times(r));
    }
    const rc = ratio(summary, "churn", "js-heap");
    target("churn ≥ 1.5× plain-JS heap", rc >= 1.5, times(rc));
    // At every N: the per-item rows on par, memory 0.8× or less, the batch calls 1.5×.
    for (const n of c.sizes) {
      for (const m of ["offer", "cancel", "drain"]) {
        const r = ratio(summary, m, "js-heap", n);
        target(`${m} ≥ 1.0× plain-JS heap at N=${pow10(n)}`, r >= 1, times(r));
      }
      const bytes = ratio(summary, "mem", "js-heap", n);
      target(
        `bytes per item ≤ 0.8× plain-JS heap at N=${pow10(n)}`,
        bytes != null && 1 / bytes <= 0.8,
        `${short(summary.tarry.mem[n])} B vs ${short(summary["js-heap"].mem[n])} B (${bytes == null ? "n/a" : `${(1 / bytes).toFixed(2)}×`})`,
      );
      for (const m of ["offerMany", "drainBatch"]) {
        const r = ratio(summary, m, "js-heap", n);
        target(
          `${m === "offerMany" ? "offerMany()" : "drain()"} ≥ 1.5× plain-JS heap at N=${pow10(n)}`,
          r >= 1.5,
          times(r),
        );
      }
    }
    const t = summary.tarry.expiry;
    const h = summary["js-heap"].expiry;
    target("timed expiry: zero early deliveries", t.early === 0, `${t.early} early`);
    target("timed expiry: order exact", t.ordered, t.ordered ? "exact" : `${t.inversions} inversions`);
    target(
      "timed expiry: p99 lateness within 2 ms of plain-JS heap",
      t.p99 <= h.p99 + 2,
      `${t.p99.toFixed(2)} ms vs ${h.p99.toFixed(2)} ms`,
    );
    target(
      "timed expiry: host timer arms ≈ one per wake-up, not per item",
      t.timerArms <= t.wakes + 64,
      `${t.timerArms} arms, ${t.wakes} wakes for ${c.expiry.n} items (plain-JS heap: ${h.timerArms} arms)`,
    );
    if (summary.java) {
      const r = ratio(summary, "offer", "java", top);
      target(`offer at N=${pow10(top)} on par with Java's DelayQueue`, r >= 1, times(r));
    }
  }
  if (growth) {
    for (const byImpl of Object.values(growth)) {
      const t = byImpl.tarry;
      const h = byImpl["js-heap"];
      const sizes = Object.keys(t).map(Number);
      const name = t[sizes[0]].runtime;
      const base = t[1e6];
      for (const n of sizes.filter((n) => n > 1e6)) {
        if (base) {
          for (const phase of ["offer", "cancel", "drain"]) {
            const g = t[n][phase].ns / base[phase].ns;
            target(
              `${name}: ${phase} at N=${pow10(n)} within 1.5× of its cost at 10^6`,
              g <= 1.5,
              `${ns(t[n][phase].ns)} vs ${ns(base[phase].ns)} ns (×${g.toFixed(2)})`,
            );
          }
          const per = (s, k) => s.offer.gcs / (k / 1e6);
          target(
            `${name}: full GCs per 10^6 offers at N=${pow10(n)} no more than at 10^6`,
            per(t[n], n) <= per(base, 1e6),
            `${per(t[n], n).toFixed(2)} vs ${per(base, 1e6).toFixed(2)}`,
          );
        }
        for (const phase of ["offer", "cancel", "drain", "churn"]) {
          const r = h[n]?.[phase] ? h[n][phase].ns / t[n][phase].ns : null;
          target(`${name}: ${phase} ≥ 1.0× plain-JS heap at N=${pow10(n)}`, r >= 1, times(r));
        }
        for (const phase of ["offerMany", "drainBatch"]) {
          const r = h[n]?.[phase] ? h[n][phase].ns / t[n][phase].ns : null;
          const label = phase === "offerMany" ? "offerMany()" : "drain()";
          target(`${name}: ${label} ≥ 1.5× plain-JS heap at N=${pow10(n)}`, r >= 1.5, times(r));
        }
        const a = t[n].bytesPerItem;
        const b = h[n]?.bytesPerItem;
        if (a != null && b != null)
          target(
            `${name}: bytes per item ≤ 0.8× plain-JS heap at N=${pow10(n)}`,
            a / b <= 0.8,
            `${a.toFixed(1)} B vs ${b.toFixed(1)} B (${(a / b).toFixed(2)}×)`,
          );
      }
    }
  }
  return out;
}

export const targetLines = (list) =>
  list.map((t) => `- ${t.ok ? "met" : "**not met**"}: ${t.what}: ${t.detail}`).join("\n");

/** The run in one line: runtime, machine, mode, length and load. */
export const headline = (meta) =>
  `Node ${meta.node}${meta.java ? `, Java ${meta.java}` : ""}, ${meta.cores} × ${meta.cpu}; ${meta.mode} run in ${Math.round(meta.seconds / 60)} min; load average ${meta.loadAverage.start[0].toFixed(1)} at the start, ${meta.loadAverage.end[0].toFixed(1)} at the end.`;

/** How to read the tables. */
function notes(meta, java) {
  const c = meta.comparison;
  const g = meta.growth;
  return [
    headline(meta),
    c &&
      `Comparison: medians of ${c.rounds} interleaved rounds (churn ${c.churnRounds}, memory ${c.memRounds}, timed expiry ${c.expiryRounds}), each implementation in fresh processes. (×k) = how many times tarry is better than that column: faster, or fewer bytes; below 1, tarry is worse.`,
    c &&
      "Offers are due in [1 h, 2 h]; cancel removes N/2 random handles; drain takes N items already due, order checked.",
    c && "setTimeout/item has no poll(): its drain row is the event loop firing N already-due timers.",
    c &&
      "What an offer costs besides time, at N pending, on the optimised offer loop: JS heap bytes allocated (the heap's growth over windows of 1000 offers after a full GC, median of 5 windows, so a values array's occasional doubling is left out; a boxed number is 12-16 B) and calls into wasm (tarry's wasm-bindgen glue methods, counted while one offer runs). tarry's wasm side allocates only as its arrays grow (the first chunk doubles up to 4096 entries, then one 4096-entry chunk at a time).",
    c &&
      "Early = handed out before performance.now() reached the item's deadline. Node starts a timer's countdown at the event loop's cached time, so setTimeout/item fires timers set late in one synchronous burst early; the one-timer designs re-check the clock.",
    java &&
      `Java: remove(Object) is O(n), so its cancel times ${Object.entries(java.cancelCount)
        .map(([n, k]) => `${k} removals at ${pow10(Number(n))}`)
        .join(", ")}, and churn ${java.churnSteps} steps; its memory counts the Delayed object every element must be.`,
    g &&
      `Growth: ${g.rounds === 1 ? "one run" : `medians of ${g.rounds} runs`} per runtime, N and implementation, each in a fresh process (Chromium: a fresh browser), tarry and the plain-JS heap alternating; ns per operation over the whole phase, per block of ${pow10(g.block)} in the curves; full GCs are mark-compacts that started in the phase's timed blocks (PerformanceObserver in Node, --trace-gc in Deno, the trace's MajorGC events in Chromium), forced ones (gc() before memory readings) left out. Memory is Node's process.memoryUsage() heapUsed + external (which includes the WebAssembly memory) after full GCs; Deno's leaves WebAssembly memory out and a page cannot read it, so those runs show none.`,
    `tarry at commit ${meta.commit}${meta.uncommittedCoreChanges ? " with uncommitted changes in src/ or js/" : ""}${meta.rebuiltDuringRun ? " (**dist/ was rebuilt during the run**)" : ""}; wasm: dist/tarry_bg.wasm ${meta.wasmBytes?.toLocaleString("en")} bytes, ${meta.wasmGzip?.toLocaleString("en")} gzipped.`,
  ].filter(Boolean);
}

/** Every runtime at a glance: offer, cancel and drain per N, and the full GCs while offering. */
export function runtimeTable(growth) {
  const lines = [
    "| runtime | N | offer, ns | cancel, ns | drain (poll), ns | full GCs while offering |",
    "| --- | --- | ---: | ---: | ---: | ---: |",
  ];
  const pair = (a, b) => `${ns(a)} / ${ns(b)}`;
  for (const byImpl of Object.values(growth)) {
    const [t, h] = GROWTH_IMPLS.map((id) => byImpl[id]);
    for (const n of Object.keys(t).map(Number)) {
      const cells = ["offer", "cancel", "drain"].map((p) => pair(t[n][p]?.ns, h[n]?.[p]?.ns));
      lines.push(
        `| ${t[n].runtime} | ${pow10(n)} | ${cells.join(" | ")} | ${t[n].offer.gcs} / ${h[n]?.offer.gcs ?? "–"} |`,
      );
    }
  }
  return `${lines.join("\n")}\n\n(tarry / plain-JS heap, ns per operation over the whole phase.)`;
}

/** The command that makes a run of `mode`. */
const COMMANDS = { full: "npm run bench -- --full", quick: "npm run bench", smoke: "node bench/run.mjs --smoke" };

/** The whole report: tables, notes and (unless a smoke run) the targets. */
export function render({ meta, summary, growth, java, list }) {
  const c = meta.comparison;
  const sections = [
    summary &&
      `## Against the peers\n\n![tarry against its peers: ops/s and bytes per item](chart.svg)\n\n${comparisonTables(c, summary)}`,
    growth &&
      `## As the queue grows\n\n![ns per operation per block of 10^6, tarry solid, plain-JS heap dashed](growth.svg)\n\n${runtimeTable(growth)}`,
    growth && `### Each runtime\n\n${growthTables(growth)}`,
    growth && `### Block by block, at the largest N\n\n${curveTables(growth)}`,
    `## How to read these tables\n\n${notes(meta, java)
      .map((n) => `- ${n}`)
      .join("\n")}`,
    meta.mode !== "smoke" && `## Targets\n\n${targetLines(list)}`,
  ].filter(Boolean);
  return `${sections.join("\n\n")}\n`;
}

/** bench/results.md: a title, the run that made it, then the report. */
export function page({ meta, report }) {
  const command = COMMANDS[meta.mode] ?? `node bench/run.mjs (${meta.mode})`;
  return [
    "# Benchmark results: tarry against its peers",
    "",
    "> Generated by `node bench/run.mjs --render` from results.json, which `npm run bench` writes; do not edit.",
    "",
    `Made by \`${command}\` on ${meta.date.slice(0, 10)} (${Math.round(meta.seconds / 60)} minutes), tarry at commit \`${meta.commit}\`, on ${meta.cores} × ${meta.cpu} with Node ${meta.node}${meta.java ? ` and Java ${meta.java}` : ""}. \`node bench/run.mjs --render\` writes this page and its charts again from [results.json](results.json), which keeps every sample. How it is measured: [Performance](../docs/performance.md).`,
    "",
    report,
  ].join("\n");
}
