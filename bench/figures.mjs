// The benchmarks' figures for the docs, in one module: the results each benchmark wrote
// (bench/results.json, bench/redis/results.json, bench/loading/results.json,
// bench/calls/results.json), read and
// summarised, and the forms the benchmark pages print them in. scripts/docs/figures.mjs
// quotes them in README.md and docs/; it imports nothing else of bench/, so a benchmark's
// files can change shape behind this module.

import { readFileSync } from "node:fs";

export { LABELS } from "./comparison.mjs";
export { table as callsTable } from "./calls/report.mjs";
export { quote as loadingQuote } from "./loading/report.mjs";
export { pow10, short } from "./numbers.mjs";
export { runtimeTable } from "./report.mjs";

import { summarise } from "./redis/report.mjs";

const json = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"));

/**
 * The figures of the last runs: `bench` (the in-memory benchmark's JSON), `redis` (the
 * Redis benchmark summarised: its table's lines and medians), `redisMeta` (that run's
 * machine, date and sizes), `loading` (the wasm loading benchmark's JSON) and `calls` (the
 * cost of one call, before and after: bench/calls/run.mjs's JSON).
 */
export function figures() {
  const redisRun = json("./redis/results.json");
  return {
    bench: json("./results.json"),
    redis: summarise(redisRun),
    redisMeta: redisRun.meta,
    loading: json("./loading/results.json"),
    calls: json("./calls/results.json"),
  };
}
