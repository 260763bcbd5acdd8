// The growth workload under Deno (the deno devDependency), with full GCs read from V8's
// --trace-gc output: Deno has no PerformanceObserver for 'gc' entries.

import { denoChild } from "../processes.mjs";

// "[pid:isolate]   1234 ms: [Incremental ]Mark-Compact ... MB, [pooled: x MB, ]12.3 / 0.0 ms ... reason; ..."
const LINE =
  /\s(\d+(?:\.\d+)?) ms: (?:Incremental )?Mark-Compact\b.*? MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/;

/**
 * Full collections from a --trace-gc log, on performance.now()'s clock: V8 stamps each line
 * with ms since the isolate started, when the pause ends; the first forced collection (reason
 * "testing") ended at `calibration`. Forced collections are left out.
 */
export function fullGcsFromTrace(trace, calibration) {
  const gcs = [];
  let offset = null;
  for (const line of trace.split("\n")) {
    const m = LINE.exec(line);
    if (!m) continue;
    const end = Number(m[1]);
    const duration = Number(m[2]);
    if (/ testing;/.test(line)) {
      offset ??= end - calibration;
      continue;
    }
    gcs.push({ end, duration });
  }
  if (offset === null) throw new Error("no forced gc() in the trace to calibrate against");
  return gcs.map((g) => ({ start: g.end - offset - g.duration, duration: g.duration }));
}

export async function growthInDeno(impl, n, block) {
  const { result, trace } = await denoChild(impl, [n, block]);
  result.gcs = fullGcsFromTrace(trace, result.calibration);
  return result;
}
