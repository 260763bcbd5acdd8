#!/usr/bin/env node
// tarry against what users would pick instead, side by side in one run (issue 4).
//
//   npm run bench               quick: N = 10^4, 10^5 (about 2 minutes on 2 cores)
//   npm run bench -- --full     adds N = 10^6 (about 10 minutes)
//   node bench/run.mjs --smoke  N = 1000, one round, no Java; asserts order and no early
//                               delivery; writes nothing (for the test suite, seconds)
//   options: --rounds R (default 5), --no-java
//
// Every measurement runs in a fresh child process (bench/child.mjs) so that memory, JIT
// state and garbage never mix between implementations; rounds interleave the
// implementations (rotating their order) and the table shows medians, because a shared
// 2-core machine is noisy. Java's DelayQueue runs in one JVM with its own rounds
// (bench/java/DelayQueueBench.java). Writes bench/results.json, bench/results.md and
// bench/chart.svg.

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, existsSync, statSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import os from "node:os";
import { IMPLS, JS_IMPLS } from "./impls.mjs";
import { chart, short, pow10 } from "./chart.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const smoke = argv.includes("--smoke");
const full = argv.includes("--full");
const withJava = !smoke && !argv.includes("--no-java");
const rounds = smoke ? 1 : Number(flag("--rounds") ?? 5);
const sizes = smoke ? [1000] : full ? [1e4, 1e5, 1e6] : [1e4, 1e5];
const churn = smoke ? { pending: 1000, steps: 10_000 } : { pending: 100_000, steps: 1_000_000 };
const expiry = smoke ? { n: 1000, from: 20, to: 200 } : { n: 100_000, from: 200, to: 1000 };
// Churn and timed expiry take seconds per run (setTimeout/item churns for ~6 s): 3 rounds
// in the quick mode.
const expiryRounds = smoke ? 1 : Math.min(rounds, 3);
const churnRounds = full ? rounds : Math.min(rounds, 3);
const mode = smoke ? "smoke" : full ? "full" : "quick";

const log = (...a) => process.stderr.write(`[bench] ${a.join(" ")}\n`);
const median = (xs) => {
  const s = xs.filter((x) => x != null && Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rotate = (xs, k) => xs.map((_, i) => xs[(i + k) % xs.length]);

/** Wall time spent per task and implementation, to keep the run's length in check. */
const spent = {};

function child(task, impl, ...rest) {
  const t0 = performance.now();
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--max-old-space-size=6144", here("./child.mjs"), task, impl, ...rest.map(String)],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      timeout: 600_000,
    },
  );
  spent[`${task} ${impl}`] = (spent[`${task} ${impl}`] ?? 0) + (performance.now() - t0) / 1000;
  return JSON.parse(out.trim().split("\n").pop());
}

// --- JS implementations --------------------------------------------------------------

const started = performance.now();
const wasmPath = here("../dist/tarry_bg.wasm");
const builtAtStart = existsSync(wasmPath) ? statSync(wasmPath).mtimeMs : null;
const js = Object.fromEntries(
  JS_IMPLS.map((id) => [
    id,
    { offer: {}, offerMany: {}, cancel: {}, drain: {}, drainBatch: {}, mem: {}, churn: [], expiry: [], ordered: true },
  ]),
);

// Memory: a fresh process per measurement; the median of 3, because at 10^4 the heap's
// own noise (code, feedback, a GC's timing) is a few hundred kilobytes.
const memRounds = smoke ? 1 : Math.min(rounds, 3);
for (let r = 0; r < memRounds; r++) {
  for (const n of sizes) {
    for (const id of rotate(JS_IMPLS, r)) {
      log(`round ${r + 1}/${memRounds} memory N=${pow10(n)} ${id}`);
      (js[id].mem[n] ??= []).push(child("mem", id, n).bytesPerItem);
    }
  }
}
for (let r = 0; r < rounds; r++) {
  for (const n of sizes) {
    for (const id of rotate(JS_IMPLS, r)) {
      log(`round ${r + 1}/${rounds} offer/cancel/drain N=${pow10(n)} ${id}`);
      const o = child("ops", id, n);
      for (const k of ["offer", "offerMany", "cancel", "drain", "drainBatch"]) (js[id][k][n] ??= []).push(o[k]);
      if (id !== "setTimeout") js[id].ordered &&= o.ordered;
    }
  }
  if (r < churnRounds) {
    for (const id of rotate(JS_IMPLS, r)) {
      log(`round ${r + 1}/${churnRounds} churn ${id}`);
      js[id].churn.push(child("churn", id, churn.pending, churn.steps).churn);
    }
  }
  if (r < expiryRounds) {
    for (const id of rotate(JS_IMPLS, r)) {
      log(`round ${r + 1}/${expiryRounds} timed expiry ${id}`);
      js[id].expiry.push(child("expiry", id, expiry.n, expiry.from, expiry.to));
    }
  }
}

// --- Java ------------------------------------------------------------------------------

let java = null;
if (withJava) {
  log(`java.util.concurrent.DelayQueue, N=${sizes.map(pow10).join(",")}`);
  try {
    const t0 = performance.now();
    const out = execFileSync(
      "java",
      [
        "-Xms1g",
        "-Xmx8g",
        here("./java/DelayQueueBench.java"),
        sizes.join(","),
        String(rounds),
        String(churn.pending),
        String(churn.steps),
      ],
      {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
        timeout: 900_000,
      },
    );
    java = JSON.parse(out.trim().split("\n").pop());
    spent.java = (performance.now() - t0) / 1000;
  } catch (e) {
    log(`java skipped: ${e.message.split("\n")[0]}`);
  }
}

// --- summary ---------------------------------------------------------------------------

const IDS = [...JS_IMPLS, ...(java ? ["java"] : [])];
const LABELS = Object.fromEntries(JS_IMPLS.map((id) => [id, IMPLS[id].label]));
if (java) LABELS.java = "Java DelayQueue";

/** summary[id][metric][n] = median; churn is keyed by "churn". */
const summary = {};
for (const id of JS_IMPLS) {
  const s = (summary[id] = {});
  for (const k of ["offer", "offerMany", "cancel", "drain", "drainBatch"]) {
    s[k] = Object.fromEntries(sizes.map((n) => [n, median(js[id][k][n])]));
  }
  s.mem = Object.fromEntries(sizes.map((n) => [n, median(js[id].mem[n])]));
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
  summary.java = {
    offer: Object.fromEntries(sizes.map((n) => [n, median(java.offer[n])])),
    cancel: Object.fromEntries(sizes.map((n) => [n, median(java.cancel[n])])),
    drain: Object.fromEntries(sizes.map((n) => [n, median(java.drain[n])])),
    drainBatch: Object.fromEntries(sizes.map((n) => [n, null])),
    offerMany: Object.fromEntries(sizes.map((n) => [n, null])),
    mem: java.mem,
    churn: median(java.churn),
    ordered: sizes.every((n) => java.drain[n].every((x) => x !== null)),
  };
}

/** How many times tarry is better than `id` (faster, or smaller for memory). */
function ratio(metric, id, n) {
  const t = n === undefined ? summary.tarry[metric] : summary.tarry[metric][n];
  const p = n === undefined ? summary[id][metric] : summary[id][metric][n];
  if (!(t > 0 && p > 0)) return null;
  return metric === "mem" ? p / t : t / p;
}

const cell = (v, r, unit = "") =>
  v == null ? "–" : `${short(v)}${unit}${r == null ? "" : ` (×${r.toFixed(r < 10 ? 2 : 1)})`}`;

const lines = [];
lines.push(`| workload | N | ${IDS.map((id) => LABELS[id]).join(" | ")} |`);
lines.push(`| --- | --- | ${IDS.map(() => "---:").join(" | ")} |`);
const row = (name, metric, n, unit = "") => {
  const cells = IDS.map((id) => {
    const v = n === undefined ? summary[id][metric] : summary[id][metric]?.[n];
    return id === "tarry" ? cell(v, null, unit) : cell(v, ratio(metric, id, n), unit);
  });
  lines.push(
    `| ${name} | ${n === undefined ? `${pow10(churn.pending)} + ${pow10(churn.steps)}` : pow10(n)} | ${cells.join(" | ")} |`,
  );
};
for (const n of sizes) row("offer, ops/s", "offer", n);
// The batch offer gets rows only once tarry has one.
if (sizes.some((n) => summary.tarry.offerMany[n] != null))
  for (const n of sizes) row("offer: one offerMany() call, items/s", "offerMany", n);
for (const n of sizes) row("cancel, ops/s", "cancel", n);
for (const n of sizes) row("drain: poll() per item, ops/s", "drain", n);
for (const n of sizes) row("drain: one drain() call, items/s", "drainBatch", n);
for (const n of sizes) row("memory, bytes per pending item", "mem", n, " B");
row("churn: offer + cancel, steps/s", "churn");
const table = lines.join("\n");

const ex = [];
ex.push(
  `| ${expiry.n.toLocaleString("en")} items due in [${expiry.from}, ${expiry.to}) ms | lateness p50 | p99 | max | early | order | host timer arms | timer wakes |`,
);
ex.push("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |");
for (const id of JS_IMPLS) {
  const e = summary[id].expiry;
  const order = e.ordered ? "exact" : `${e.inversions} inversions`;
  ex.push(
    `| ${LABELS[id]} | ${e.p50.toFixed(2)} ms | ${e.p99.toFixed(2)} ms | ${e.max.toFixed(2)} ms | ${e.early} | ${order} | ${e.timerArms.toLocaleString("en")} | ${e.wakes == null ? "–" : e.wakes.toLocaleString("en")} |`,
  );
}
const expiryTable = ex.join("\n");

// --- targets of issue 4 ---------------------------------------------------------------

const targets = [];
const target = (what, ok, detail) => targets.push({ what, ok, detail });
const fmt = (r) => (r == null ? "n/a" : `×${r.toFixed(2)}`);
const at = (n) => (sizes.includes(n) ? n : null);
const n5 = at(1e5) ?? sizes[sizes.length - 1];
for (const m of ["offer", "cancel"]) {
  const r = ratio(m, "setTimeout", n5);
  target(`${m} ≥ 10× setTimeout/item at N=${pow10(n5)}`, r >= 10, fmt(r));
}
{
  const r = ratio("mem", "setTimeout", n5);
  target(`memory ≥ 4× less than setTimeout/item at N=${pow10(n5)}`, r >= 4, fmt(r));
}
const nTop = sizes[sizes.length - 1];
for (const m of ["offer", "cancel"]) {
  const r = ratio(m, "js-heap", nTop);
  target(`${m} ≥ 1.5× plain-JS heap at N=${pow10(nTop)}${nTop < 1e6 ? " (10^6 with --full)" : ""}`, r >= 1.5, fmt(r));
}
{
  const r = ratio("churn", "js-heap");
  target("churn ≥ 1.5× plain-JS heap", r >= 1.5, fmt(r));
  const m = ratio("mem", "js-heap", nTop);
  target(
    `less memory than plain-JS heap at N=${pow10(nTop)}`,
    m > 1,
    `${fmt(m)} (${short(summary.tarry.mem[nTop])} B vs ${short(summary["js-heap"].mem[nTop])} B)`,
  );
}
{
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
    `${t.timerArms} arms, ${t.wakes} wakes for ${expiry.n} items (plain-JS heap: ${h.timerArms} arms)`,
  );
}
if (java) {
  const r = ratio("offer", "java", nTop);
  target(
    `offer at N=${pow10(nTop)} on par with Java's DelayQueue${nTop < 1e6 ? " (10^6 with --full)" : ""}`,
    r >= 1,
    fmt(r),
  );
}
const targetLines = targets.map((t) => `- ${t.ok ? "met" : "**not met**"}: ${t.what}: ${t.detail}`).join("\n");

// --- output ----------------------------------------------------------------------------

const wasm = existsSync(wasmPath) ? readFileSync(wasmPath) : null;
const wasmBytes = wasm ? wasm.length : null;
const wasmGzip = wasm ? gzipSync(wasm, { level: 9 }).length : null;
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
const git = (...a) => {
  try {
    return execFileSync("git", a, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};
// What was measured: the commit, and whether src/ or js/ differed from it (a shared tree).
const commit = git("rev-parse", "--short", "HEAD");
const dirty = git("status", "--porcelain", "--", "src", "js", "Cargo.toml");
const meta = {
  date: new Date().toISOString(),
  mode,
  node: process.version,
  java: java?.java ?? null,
  cpu,
  cores: os.cpus().length,
  rounds,
  expiryRounds,
  churnRounds,
  memRounds,
  sizes,
  churn,
  expiry,
  commit,
  uncommittedCoreChanges: dirty ? dirty.split("\n").length : 0,
  wasmBuilt: wasm ? statSync(wasmPath).mtime.toISOString() : null,
  rebuiltDuringRun: wasm ? statSync(wasmPath).mtimeMs !== builtAtStart : false,
  wasmBytes,
  wasmGzip,
  seconds: Math.round((performance.now() - started) / 1000),
};
const notes = [
  `Node ${meta.node}${java ? `, Java ${java.java}` : ""}, ${meta.cores} × ${cpu}; ${mode} run, medians of ${rounds} interleaved rounds (churn ${churnRounds}, memory ${memRounds}, timed expiry ${expiryRounds}), each implementation in fresh processes.`,
  "(×k) = how many times tarry is better than that column: faster, or fewer bytes; below 1, tarry is worse.",
  "Offers are due in [1 h, 2 h]; cancel removes N/2 random handles; drain takes N items already due, order checked.",
  "setTimeout/item has no poll(): its drain row is the event loop firing N already-due timers.",
  "Early = handed out before performance.now() reached the item's deadline. Node starts a timer's countdown at the event loop's cached time, so setTimeout/item fires timers set late in one synchronous burst early; the one-timer designs re-check the clock.",
  java
    ? `Java: remove(Object) is O(n), so its cancel times ${Object.entries(java.cancelCount)
        .map(([n, c]) => `${c} removals at ${pow10(Number(n))}`)
        .join(", ")}, and churn ${java.churnSteps} steps; its memory counts the Delayed object every element must be.`
    : null,
  `tarry at commit ${commit}${meta.uncommittedCoreChanges ? ` with uncommitted changes in src/ or js/` : ""}${meta.rebuiltDuringRun ? " (**dist/ was rebuilt during the run**)" : ""}; wasm: dist/tarry_bg.wasm ${wasmBytes?.toLocaleString("en")} bytes, ${wasmGzip?.toLocaleString("en")} gzipped.`,
].filter(Boolean);

const report = `${table}\n\n${expiryTable}\n\n${notes.map((n) => `- ${n}`).join("\n")}\n${smoke ? "" : `\nTargets of issue 4:\n\n${targetLines}\n`}`;
process.stdout.write(`\n${report}\n`);
log(
  `done in ${meta.seconds} s; seconds per task: ${Object.entries(spent)
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(", ")}`,
);

if (!smoke) {
  writeFileSync(here("./results.json"), `${JSON.stringify({ meta, summary, samples: js, java, targets }, null, 1)}\n`);
  writeFileSync(here("./results.md"), `<!-- written by bench/run.mjs (${mode}, ${meta.date}) -->\n\n${report}`);
  const panel = (title, metric, unit, better) => ({
    title,
    unit,
    better,
    groups: sizes.map((n) => ({
      label: `N = ${pow10(n)}`,
      bars: IDS.map((id) => ({ impl: id, value: summary[id][metric]?.[n] })),
    })),
  });
  const panels = [
    panel("offer", "offer", "ops/s", "higher"),
    panel("cancel", "cancel", "ops/s", "higher"),
    panel("drain (poll per item)", "drain", "ops/s", "higher"),
    panel("memory per pending item", "mem", "bytes", "lower"),
    {
      title: `churn (${pow10(churn.pending)} pending, offer + cancel)`,
      unit: "steps/s",
      better: "higher",
      groups: [
        { label: `${pow10(churn.steps)} steps`, bars: IDS.map((id) => ({ impl: id, value: summary[id].churn })) },
      ],
    },
  ];
  writeFileSync(here("./chart.svg"), `${chart(panels, LABELS, notes[0])}\n`);
  log("wrote bench/results.json, bench/results.md, bench/chart.svg");
}

if (smoke) {
  const failures = [];
  for (const id of JS_IMPLS) {
    if (id !== "setTimeout" && !summary[id].ordered) failures.push(`${id}: drain order wrong`);
    const e = summary[id].expiry;
    if (id !== "setTimeout" && e.early !== 0) failures.push(`${id}: ${e.early} early deliveries`);
    if (id !== "setTimeout" && !e.ordered) failures.push(`${id}: timed expiry order wrong`);
  }
  for (const f of failures) log(`FAIL ${f}`);
  const checks = (JS_IMPLS.length - 1) * 3;
  console.log(`smoke: ${checks - failures.length} passed, ${failures.length} failed`);
  process.exit(failures.length ? 1 : 0);
}
