// What the benchmarks' run scripts share: reading their options, the order of the
// implementations in each round, and writing a results page as the linter wants it.

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";

const BIOME = fileURLToPath(new URL("../node_modules/.bin/biome", import.meta.url));

/** The value after `name` in `argv` (`--rounds 3`), or `fallback` when `name` is not there. */
export function option(/** @type {string[]} */ argv, /** @type {string} */ name, fallback = undefined) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : fallback;
}

/** Round k's order: `xs` from its k-th element on, so that each goes first in turn. */
export const rotate = (/** @type {any[]} */ xs, /** @type {number} */ k) => xs.map((_, i) => xs[(i + k) % xs.length]);

/** A run's command, date, length (from `started`, a Date.now()), commit and machine, as the results pages name them. */
export function runOf(/** @type {string} */ command, /** @type {number} */ started) {
  return {
    command,
    date: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
    node: process.version,
    cpu: os.cpus()[0].model.trim(),
    cores: os.cpus().length,
  };
}

/**
 * Writes `page` to the file `md`, then formats it and the results file `json` with Biome (both
 * are kept in the repository; without Biome they stay as written, and `log` says so).
 */
export function writeResults(
  /** @type {string} */ md,
  /** @type {string} */ json,
  /** @type {string} */ page,
  /** @type {(line: string) => void} */ log,
) {
  writeFileSync(md, page);
  try {
    execFileSync(BIOME, ["format", "--write", json, md], { stdio: "ignore" });
  } catch {
    log("biome is not installed: the page is not formatted (npm run format does it)");
  }
}
