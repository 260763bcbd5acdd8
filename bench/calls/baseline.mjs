// The "before" of bench/calls/run.mjs: tarry at another commit, extracted from git into
// target/baseline-<commit>/ and built there by that commit's own scripts/build.sh (its
// node_modules a link to this tree's, so nothing is downloaded), once; later runs reuse it.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The commit the cost-of-one-call table was first measured at (main on 2026-12-01, before any
 * of the changes the table's rows ask for): lone Redis calls ran the library of every script,
 * the wasm was 67,570 bytes, and an offer went through the options path.
 */
export const BASELINE = "d606c9c";

/** The built tree of `ref`: its directory, and the full commit. */
export function baselineTree(ref = BASELINE, log = () => {}) {
  const commit = execFileSync("git", ["rev-parse", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  const dir = join(root, "target", `baseline-${commit.slice(0, 12)}`);
  const done = join(dir, ".built");
  if (existsSync(done)) return { dir, commit };
  log(`extracting ${commit.slice(0, 12)} into ${dir} and building it with its scripts/build.sh`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("bash", ["-c", `git archive ${commit} | tar -x -C "${dir}"`], { cwd: root, stdio: "inherit" });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  execFileSync("bash", ["scripts/build.sh"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(done, `${commit}\n`);
  return { dir, commit };
}
