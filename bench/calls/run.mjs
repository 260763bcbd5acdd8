#!/usr/bin/env node
// The cost of one call, before and after: every row of the table on the performance page
// measured in one run for three columns: tarry at BASELINE (bench/calls/baseline.mjs: that
// commit, built by its own scripts/build.sh), tarry as this tree builds it, and the peer
// (BullMQ 6.7 on Redis; the plain-JS heap in memory; a page's budget). The workload code is
// this tree's for both builds (bench/calls/root.mjs points `tarry-queue` at the other tree),
// each measurement in fresh processes, the three interleaved over rounds, medians.
//
//   npm run bench -- --calls                 3 rounds (about 25 minutes on 2 cores)
//   node bench/calls/run.mjs --rounds R      options: --rounds R, --before REF (a commit; default
//                                            BASELINE), --smoke (one round, small sizes, nothing
//                                            written: checks every row runs)
//   node bench/calls/run.mjs --render        bench/calls/results.md again from results.json
//
// Writes bench/calls/results.json (every sample, the run's settings and machine) and
// bench/calls/results.md (bench/calls/report.mjs).

import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { measure } from "../../tests/schedule/page-weight.mjs";
import { option, rotate, runOf, writeResults } from "../cli.mjs";
import { nodeChild } from "../processes.mjs";
import { runner } from "../redis/runs.mjs";
import { startRedis } from "../../tools/redis-server.mjs";
import { BASELINE, baselineTree } from "./baseline.mjs";
import { render } from "./report.mjs";
import { rootEnv } from "./root.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => option(argv, name);
const log = (...a) => process.stderr.write(`[bench:calls] ${a.join(" ")}\n`);

function writePage(run) {
  const page = render(run);
  writeResults(here("./results.md"), here("./results.json"), page, log);
  console.log(page);
}

if (argv.includes("--render")) {
  writePage(JSON.parse(readFileSync(here("./results.json"), "utf8")));
  process.exit(0);
}

const smoke = argv.includes("--smoke");
const rounds = smoke ? 1 : Number(flag("--rounds") ?? 3);
const ref = flag("--before") ?? BASELINE;
const { dir: beforeDir, commit: beforeCommit } = baselineTree(ref, log);
const roots = { before: beforeDir };
/** A process's environment for `impl`: the earlier build's imports for "before". */
const envOf = (impl) => (impl === "before" ? rootEnv(beforeDir) : process.env);
const TARRY = ["before", "tarry"]; // the two builds
const REDIS = [...TARRY, "bullmq"];
const WORKERS = [1, 2, 4];
const SERIAL = smoke ? 200 : 5000; // awaited offers per add-serial run
const WARM_UP = 300; // and the offers bench/redis/child.mjs's add-serial makes before them
const LONE = smoke ? 100 : 2000; // lone calls per calls.mjs round
const OFFER_SIZES = smoke ? [1e3, 1e4] : [1e4, 1e5, 1e6];
const started = Date.now();
const load = [os.loadavg()[0]];

const results = { adds: {}, spread: {}, burst: {}, queues: {}, calls: {}, offers: {}, page: {} };
for (const impl of REDIS) {
  results.adds[impl] = [];
  results.spread[impl] = [];
  results.queues[impl] = [];
  results.burst[impl] = Object.fromEntries(WORKERS.map((w) => [w, []]));
}
for (const impl of TARRY) results.calls[impl] = [];
for (const impl of [...TARRY, "js-heap"]) results.offers[impl] = Object.fromEntries(OFFER_SIZES.map((n) => [n, []]));

// --- Redis -----------------------------------------------------------------------------------

const redis = await startRedis();
const runs = runner(redis, { log, roots });
/** A delivery run's figures kept (not its per-item arrays). */
const keep = ({ p50, p99, max, early, lost, twice, perSec, commandsPerItem, scriptsPerItem, redisCpuUs }) => ({
  p50,
  p99,
  max,
  early,
  lost,
  twice,
  perSec,
  commandsPerItem,
  scriptsPerItem,
  redisCpuUs,
});
for (let r = 0; r < rounds; r++) {
  log(`round ${r + 1}/${rounds} (load ${os.loadavg()[0].toFixed(2)})`);
  for (const impl of rotate(REDIS, r)) {
    await redis.cli("flushall");
    await runs.serverCommands(); // from here: the run's commands (its offers, and its PINGs)
    const { perSec, pingPerSec } = await runs.child("add-serial", impl, { n: SERIAL }).result;
    const { scripts } = await runs.serverCommands();
    // Redis µs in scripts per offer (the run's offers and its warm-up's): the time Redis itself
    // adds to each awaited offer.
    const offers = SERIAL + WARM_UP;
    const scriptUs = scripts.usec / offers;
    results.adds[impl].push({ perSec, pingPerSec, scriptUs, scriptsPerAdd: scripts.calls / offers });
    log(
      `add-serial ${impl}: ${Math.round(perSec)}/s, PING ${Math.round(pingPerSec)}/s, ${scriptUs.toFixed(1)} µs in scripts`,
    );
  }
  if (!smoke) {
    for (const impl of rotate(REDIS, r)) {
      const s = keep(await runs.delivery(impl, "spread", 2));
      results.spread[impl].push(s);
      log(`spread 2 ${impl}: p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} ms, early ${s.early}`);
    }
    for (const w of WORKERS)
      for (const impl of rotate(REDIS, r)) {
        const s = keep(await runs.delivery(impl, "burst", w));
        results.burst[impl][w].push(s);
        log(`burst ${w} ${impl}: ${Math.round(s.perSec)}/s, ${s.commandsPerItem.toFixed(2)} commands per item`);
      }
    // BullMQ's 10^4 queues take about a minute and a half (a blocking connection per worker): once.
    for (const impl of r === 0 ? rotate(REDIS, r) : rotate(TARRY, r)) results.queues[impl].push(runs.queuesRun(impl));
  }
  // Redis µs per lone call (bench/redis/calls.mjs, a server of its own), each build in turn.
  for (const impl of rotate(TARRY, r)) {
    const out = execFileSync(process.execPath, [here("../redis/calls.mjs"), "--calls", String(LONE), "--rounds", "1"], {
      encoding: "utf8",
      env: envOf(impl),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const { callUs, setUpUs, takeRunsPerItem } = JSON.parse(out.trim().split("\n").pop());
    results.calls[impl].push({ callUs, setUpUs, takeRunsPerItem });
    log(`lone calls ${impl}: ${JSON.stringify(callUs)}`);
  }
  load.push(os.loadavg()[0]);
}
await redis.stop();

// --- in memory -------------------------------------------------------------------------------

for (let r = 0; r < rounds; r++)
  for (const n of OFFER_SIZES)
    for (const impl of rotate(Object.keys(results.offers), r)) {
      const build = impl === "before" ? "tarry" : impl;
      const { offer, offerCost } = await nodeChild("offer", build, [n], undefined, envOf(impl));
      results.offers[impl][n].push({ offer, ...offerCost });
      log(`offer N=${n} ${impl}: ${(offer / 1e6).toFixed(2)}M/s`);
    }
load.push(os.loadavg()[0]);

// --- a page ----------------------------------------------------------------------------------

for (const [impl, root] of [
  ["before", beforeDir],
  ["tarry", fileURLToPath(new URL("../..", import.meta.url))],
]) {
  const { pages, wasm } = measure(root);
  results.page[impl] = { bytes: pages.DelayQueue.bytes, gzip: pages.DelayQueue.gzip, wasm };
}

const meta = {
  ...runOf(`npm run bench -- --calls${argv.length ? ` ${argv.join(" ")}` : ""}`, started),
  before: beforeCommit.slice(0, 7),
  beforeDate: execFileSync("git", ["log", "-1", "--format=%cs", beforeCommit], { encoding: "utf8" }).trim(),
  redis: execFileSync("redis-server", ["--version"], { encoding: "utf8" }).match(/v=(\S+)/)[1],
  load,
  rounds,
  serial: SERIAL,
  lone: LONE,
  workers: WORKERS,
  offerSizes: OFFER_SIZES,
};
if (smoke) {
  process.stdout.write(render({ meta, results }));
  process.exit(0);
}
writeFileSync(here("./results.json"), `${JSON.stringify({ meta, results }, null, 1)}\n`);
writePage({ meta, results });
