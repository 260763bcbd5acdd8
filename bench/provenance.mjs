// What a benchmark run measured: the commit and whether src/ or js/ differed from it (a
// shared tree), the wasm and its size, the machine and its load.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";

const wasmPath = fileURLToPath(new URL("../dist/tarry_bg.wasm", import.meta.url));

const git = (...a) => {
  try {
    return execFileSync("git", a, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};

const wasmTime = () => (existsSync(wasmPath) ? statSync(wasmPath).mtimeMs : null);

/** Call at the start of a run; `finish()` at its end gives the run's provenance. */
export function provenance() {
  const started = performance.now();
  const builtAtStart = wasmTime();
  const loadAtStart = os.loadavg();
  return {
    finish(extra = {}) {
      const wasm = existsSync(wasmPath) ? readFileSync(wasmPath) : null;
      const dirty = git("status", "--porcelain", "--", "src", "js", "Cargo.toml");
      return {
        date: new Date().toISOString(),
        node: process.version,
        cpu: os.cpus()[0]?.model ?? "unknown CPU",
        cores: os.cpus().length,
        loadAverage: { start: loadAtStart, end: os.loadavg() },
        commit: git("rev-parse", "--short", "HEAD"),
        uncommittedCoreChanges: dirty ? dirty.split("\n").length : 0,
        wasmBuilt: wasm ? statSync(wasmPath).mtime.toISOString() : null,
        rebuiltDuringRun: wasmTime() !== builtAtStart,
        wasmBytes: wasm?.length ?? null,
        // As scripts/build.sh measures it, so that the two figures agree.
        wasmGzip: wasm ? execFileSync("gzip", ["-9", "-c", wasmPath]).length : null,
        seconds: Math.round((performance.now() - started) / 1000),
        ...extra,
      };
    },
  };
}
