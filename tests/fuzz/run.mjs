// Runs the JS-face fuzzer (face.mjs) and the snapshot-decoder fuzzer (snapshot.mjs) over many
// seeds for a while, and prints what they found: per fuzzer the runs, steps, public calls,
// and each failure with its seed, a shrunk replay command and the trace.
//
//   node tests/fuzz/run.mjs [--seconds 300] [--seed N] [--steps 400] [--only face|snapshot]
//
// Without --seed each run draws a fresh random seed (printed); with it, seeds N, N+1, …
// (what `npm test` runs: a fixed, short list). Exits non-zero if anything failed.

import { describeFailure, runFace, shrink } from "./face.mjs";
import { freshSeed } from "./random.mjs";
import { runSnapshotFuzz } from "./snapshot.mjs";

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
}

const seconds = Number(arg("seconds", "300"));
const steps = Number(arg("steps", "400"));
const first = arg("seed", null);
const only = arg("only", null);
const deadline = performance.now() + seconds * 1000;
let next = first === null ? null : Number(first) >>> 0;
const seed = () => (next === null ? freshSeed() : next++ >>> 0);

const failures = [];

async function face(share) {
  const until = performance.now() + share;
  let runs = 0;
  let totalSteps = 0;
  let calls = 0;
  const counts = {};
  while (performance.now() < until || runs === 0) {
    const s = seed();
    const result = await runFace({ seed: s, steps });
    runs++;
    totalSteps += result.executed.length;
    calls += result.calls;
    for (const [k, v] of Object.entries(result.counts)) counts[k] = (counts[k] ?? 0) + v;
    if (!result.ok) {
      const shrunk = await shrink(result);
      const text = describeFailure(result, shrunk);
      console.log(`\n${text}\n`);
      failures.push(`face seed ${s}: ${result.failure.message.split("\n")[0]}`);
      if (failures.length >= 5) break;
    }
  }
  console.log(
    `face fuzzer: ${runs} runs, ${totalSteps} steps, ${calls} public calls; ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
}

async function snapshot(share) {
  const s = seed();
  const r = await runSnapshotFuzz({ seed: s, ms: share });
  console.log(
    `snapshot decoder fuzzer (seed ${s}): ${r.cases} inputs (${r.restored} restored, ${r.refused} refused with a TypeError or RangeError, ${r.own} threw the input's own error)`,
  );
  for (const f of r.failures.slice(0, 10)) console.log(`  FAILED: ${f}`);
  for (const f of r.failures) failures.push(`snapshot seed ${s}: ${f.split("\n")[0]}`);
}

const total = deadline - performance.now();
if (only !== "snapshot") await face(only === "face" ? total : total * 0.75);
if (only !== "face") await snapshot(Math.max(deadline - performance.now(), 1000));

if (failures.length === 0) {
  console.log("found nothing");
} else {
  console.log(`found ${failures.length}:\n  ${failures.join("\n  ")}`);
  process.exitCode = 1;
}
