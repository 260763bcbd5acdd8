// `node --import bench/calls/root.mjs`: the process imports `tarry-queue` and its subpaths
// from the tree TARRY_ROOT names (a checkout of another commit, built) instead of this one,
// so that a benchmark's unchanged workload code measures two builds of the library side by
// side. Without TARRY_ROOT it changes nothing. `rootEnv(dir)` is the environment that does
// this for a process and, through NODE_OPTIONS, every process it starts.
import { register } from "node:module";
import { fileURLToPath } from "node:url";

if (process.env.TARRY_ROOT) register("./root-hooks.mjs", import.meta.url, { data: { root: process.env.TARRY_ROOT } });

/** process.env with `tarry-queue` imported from `root`. */
export function rootEnv(/** @type {string} */ root) {
  const hook = fileURLToPath(import.meta.url);
  return {
    ...process.env,
    TARRY_ROOT: root,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${hook}`.trim(),
  };
}
