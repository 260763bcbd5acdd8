#!/usr/bin/env node
// `npm run bench`: tarry against what users would pick instead (bench/comparison.mjs), and
// its cost per operation as the queue grows, per block of 10^6 operations, with the full
// GCs, in Node, Node 24, Deno and Chromium (bench/growth.mjs). Options: bench/options.mjs.
// Writes bench/results.json (every sample), bench/results.md, bench/chart.svg and
// bench/growth.svg.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { comparisonChart, growthChart } from "./chart.mjs";
import { LABELS, measureComparison, measureOffers, summariseComparison } from "./comparison.mjs";
import { GROWTH_IMPLS, measureGrowth, PHASES, summariseGrowth } from "./growth.mjs";
import { JS_IMPLS } from "./impls.mjs";
import { parseOptions } from "./options.mjs";
import { spent } from "./processes.mjs";
import { provenance } from "./provenance.mjs";
import { headline, page, render, targets } from "./report.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const log = (...a) => process.stderr.write(`[bench] ${a.join(" ")}\n`);

const options = parseOptions(process.argv.slice(2));

/** bench/results.md, bench/chart.svg and bench/growth.svg from a run's figures. */
function writeOutputs({ meta, summary, growth, report }) {
  writeFileSync(here("./results.md"), page({ meta, report }));
  const subtitle = headline(meta);
  if (summary) writeFileSync(here("./chart.svg"), `${comparisonChart(meta.comparison, summary, LABELS, subtitle)}\n`);
  if (growth) writeFileSync(here("./growth.svg"), `${growthChart(growth, LABELS, subtitle)}\n`);
  log("wrote bench/results.md, bench/chart.svg, bench/growth.svg");
}

if (options.render) {
  const saved = JSON.parse(readFileSync(here("./results.json"), "utf8"));
  const list = targets(saved.meta.comparison, saved.summary, saved.growth);
  const report = render({ ...saved, list });
  process.stdout.write(`\n${report}`);
  writeOutputs({ ...saved, report });
  process.exit(0);
}

if (options.offers) {
  process.stdout.write(`${await measureOffers(options.offers, log)}\n`);
  if (options.mode !== "smoke") process.exit(0);
}

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
const list = targets(c, summary, growth);
const report = render({ meta, summary, growth, java: comparison?.java, list });
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
  writeOutputs({ meta, summary, growth, report });
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
