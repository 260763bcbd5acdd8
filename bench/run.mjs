#!/usr/bin/env node
// `npm run bench`: tarry against what users would pick instead (bench/comparison.mjs), and
// its cost per operation as the queue grows, per block of 10^6 operations, with the full
// GCs, in Node, Node 24, Deno and Chromium (bench/growth.mjs). Options: bench/options.mjs.
// Writes bench/results.json (every sample), bench/results.md, bench/chart.svg and
// bench/growth.svg.

import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chart, curves } from "./chart.mjs";
import { LABELS, measureComparison, summariseComparison } from "./comparison.mjs";
import { GROWTH_IMPLS, measureGrowth, PHASES, summariseGrowth } from "./growth.mjs";
import { JS_IMPLS } from "./impls.mjs";
import { pow10 } from "./numbers.mjs";
import { parseOptions } from "./options.mjs";
import { spent } from "./processes.mjs";
import { provenance } from "./provenance.mjs";
import { comparisonTables, curveTables, growthTables, targetLines, targets } from "./report.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const log = (...a) => process.stderr.write(`[bench] ${a.join(" ")}\n`);

const options = parseOptions(process.argv.slice(2));
const run = provenance();
const c = options.comparison;
const g = options.growth;

const comparison = c ? await measureComparison(c, log) : null;
const summary = c ? summariseComparison(c, comparison) : null;
const growthSamples = g ? await measureGrowth(g.plan, { rounds: g.rounds, block: g.block, log }) : null;
const growth = g ? summariseGrowth(growthSamples) : null;

const meta = run.finish({
  mode: options.mode,
  java: comparison?.java?.java ?? null,
  comparison: c,
  growth: g,
  spent,
});
const ids = summary ? Object.keys(summary) : [];
const notes = [
  `Node ${meta.node}${meta.java ? `, Java ${meta.java}` : ""}, ${meta.cores} × ${meta.cpu}; ${meta.mode} run in ${Math.round(meta.seconds / 60)} min; load average ${meta.loadAverage.start[0].toFixed(1)} at the start, ${meta.loadAverage.end[0].toFixed(1)} at the end.`,
  c &&
    `Comparison: medians of ${c.rounds} interleaved rounds (churn ${c.churnRounds}, memory ${c.memRounds}, timed expiry ${c.expiryRounds}), each implementation in fresh processes. (×k) = how many times tarry is better than that column: faster, or fewer bytes; below 1, tarry is worse.`,
  c &&
    "Offers are due in [1 h, 2 h]; cancel removes N/2 random handles; drain takes N items already due, order checked.",
  c && "setTimeout/item has no poll(): its drain row is the event loop firing N already-due timers.",
  c &&
    "Early = handed out before performance.now() reached the item's deadline. Node starts a timer's countdown at the event loop's cached time, so setTimeout/item fires timers set late in one synchronous burst early; the one-timer designs re-check the clock.",
  comparison?.java &&
    `Java: remove(Object) is O(n), so its cancel times ${Object.entries(comparison.java.cancelCount)
      .map(([n, k]) => `${k} removals at ${pow10(Number(n))}`)
      .join(
        ", ",
      )}, and churn ${comparison.java.churnSteps} steps; its memory counts the Delayed object every element must be.`,
  g &&
    `Growth: ${g.rounds === 1 ? "one run" : `medians of ${g.rounds} runs`} per runtime, N and implementation, each in a fresh process (Chromium: a fresh browser), tarry and the plain-JS heap alternating; ns per operation over the whole phase, per block of ${pow10(g.block)} in the curves; full GCs are mark-compacts that started in the phase's timed blocks (PerformanceObserver in Node, --trace-gc in Deno, the trace's MajorGC events in Chromium), forced ones (gc() before memory readings) left out.`,
  `tarry at commit ${meta.commit}${meta.uncommittedCoreChanges ? " with uncommitted changes in src/ or js/" : ""}${meta.rebuiltDuringRun ? " (**dist/ was rebuilt during the run**)" : ""}; wasm: dist/tarry_bg.wasm ${meta.wasmBytes?.toLocaleString("en")} bytes, ${meta.wasmGzip?.toLocaleString("en")} gzipped.`,
].filter(Boolean);

const list = targets(c, summary, growth);
const sections = [
  c && comparisonTables(c, summary),
  g && growthTables(growth),
  g && curveTables(growth),
  notes.map((n) => `- ${n}`).join("\n"),
  options.mode !== "smoke" && `Targets:\n\n${targetLines(list)}`,
].filter(Boolean);
const report = `${sections.join("\n\n")}\n`;
process.stdout.write(`\n${report}`);
log(
  `done in ${meta.seconds} s; seconds per task: ${Object.entries(spent)
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(", ")}`,
);

if (options.write) {
  writeFileSync(
    here("./results.json"),
    `${JSON.stringify({ meta, summary, growth, samples: comparison?.js, java: comparison?.java, growthSamples, targets: list }, null, 1)}\n`,
  );
  writeFileSync(here("./results.md"), `<!-- written by bench/run.mjs (${options.mode}, ${meta.date}) -->\n\n${report}`);
  const panel = (title, metric, unit, better) => ({
    title,
    unit,
    better,
    groups: c.sizes.map((n) => ({
      label: `N = ${pow10(n)}`,
      bars: ids.map((id) => ({ impl: id, value: summary[id][metric]?.[n] })),
    })),
  });
  const labels = Object.fromEntries(ids.map((id) => [id, LABELS[id]]));
  const panels = [
    panel("offer", "offer", "ops/s", "higher"),
    panel("cancel", "cancel", "ops/s", "higher"),
    panel("drain (poll per item)", "drain", "ops/s", "higher"),
    panel("memory per pending item", "mem", "bytes", "lower"),
    {
      title: `churn (${pow10(c.churn.pending)} pending, offer + cancel)`,
      unit: "steps/s",
      better: "higher",
      groups: [
        { label: `${pow10(c.churn.steps)} steps`, bars: ids.map((id) => ({ impl: id, value: summary[id].churn })) },
      ],
    },
  ];
  writeFileSync(here("./chart.svg"), `${chart(panels, labels, notes[0])}\n`);
  const curvePanels = Object.values(growth).map((byImpl) => {
    const n = Math.max(...Object.keys(byImpl.tarry).map(Number));
    return {
      title: `${byImpl.tarry[n].runtime}, N = ${pow10(n)}`,
      xLabel: "operations done in the phase",
      series: GROWTH_IMPLS.flatMap((id) =>
        ["offer", "cancel", "drain"].map((phase) => ({
          label: `${LABELS[id]}: ${phase}`,
          phase,
          dashed: id !== "tarry",
          points: byImpl[id][n][phase].blocks.map((v, k) => [((k + 1) * byImpl[id][n].block) / 1e6, v]),
        })),
      ),
    };
  });
  writeFileSync(here("./growth.svg"), `${curves(curvePanels, notes[0])}\n`);
  log("wrote bench/results.json, bench/results.md, bench/chart.svg, bench/growth.svg");
}

if (options.mode === "smoke") {
  const failures = [];
  for (const id of JS_IMPLS) {
    if (id === "setTimeout") continue;
    if (!summary[id].ordered) failures.push(`${id}: drain order wrong`);
    const e = summary[id].expiry;
    if (e.early !== 0) failures.push(`${id}: ${e.early} early deliveries`);
    if (!e.ordered) failures.push(`${id}: timed expiry order wrong`);
  }
  // measureGrowth throws on a wrong order; here, every phase ran in every runtime.
  let checks = (JS_IMPLS.length - 1) * 3;
  for (const [runtime, sizes] of Object.entries(g.plan)) {
    for (const id of GROWTH_IMPLS) {
      for (const phase of PHASES) {
        checks++;
        if (!(growth[runtime][id][sizes[0]][phase]?.ns > 0))
          failures.push(`${runtime} ${id}: growth phase ${phase} missing`);
      }
    }
  }
  for (const f of failures) log(`FAIL ${f}`);
  console.log(`smoke: ${checks - failures.length} passed, ${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
}
