// The fuzzers' short seeded runs for `npm test` (a few seconds each, the same seeds every
// time); `npm run fuzz` runs them for minutes on random seeds (tests/fuzz/run.mjs).
// A failure prints the seed, a shrunk replay command and the calls that led to it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { describeFailure, runFace, shrink } from "./face.mjs";
import { runSnapshotFuzz } from "./snapshot.mjs";

// Seeds 1..400, and the seeds on which the fuzzer found defects (each kept by a test of its
// feature in tests/js/: values, timer, snapshot).
const SEEDS = [...Array.from({ length: 400 }, (_, i) => i + 1), 3878, 4844, 50068];

test("JS face against its model: 400+ seeded runs of random calls on a fake clock and timer host", async () => {
  let calls = 0;
  let steps = 0;
  const counts = {};
  for (const seed of SEEDS) {
    const result = await runFace({ seed, steps: 300 });
    if (!result.ok) assert.fail(describeFailure(result, await shrink(result, { budgetMs: 10_000 })));
    calls += result.calls;
    steps += result.executed.length;
    for (const [k, v] of Object.entries(result.counts)) counts[k] = (counts[k] ?? 0) + v;
  }
  console.log(
    `face fuzzer: ${SEEDS.length} runs, ${steps} steps, ${calls} public calls, found nothing; ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
});

test("snapshot decoder: 20,000 arbitrary and mutated inputs (seed 1)", async () => {
  const t = await runSnapshotFuzz({ seed: 1, ms: Infinity, cases: 20_000 });
  console.log(
    `snapshot decoder fuzzer: ${t.cases} inputs, ${t.restored} restored, ${t.refused} refused, ${t.own} threw their own error, found ${t.failures.length}`,
  );
  assert.deepEqual(t.failures, []);
  assert.equal(t.cases, 20_000);
});
