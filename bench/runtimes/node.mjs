// What the benchmark reads from Node (20 and 24) about memory and garbage collection.

import { constants, PerformanceObserver } from "node:perf_hooks";

/** Bytes in use after full collections: the JS heap, and memory outside it. */
export async function memoryInUse() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const m = process.memoryUsage();
  // `external` counts array buffers and WebAssembly memories (their whole size).
  return m.heapUsed + m.external;
}

/**
 * Records full collections (mark-compact) from now on, leaving out the ones the benchmark
 * forces with gc(). `stop()` resolves to [{ start, duration }] in ms on performance.now()'s
 * clock, once the observer has been handed every entry.
 */
export function fullGcs() {
  const gcs = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const { kind, flags } = e.detail ?? e;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR && !(flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED))
        gcs.push({ start: e.startTime, duration: e.duration });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 50));
      observer.disconnect();
      return gcs;
    },
  };
}
