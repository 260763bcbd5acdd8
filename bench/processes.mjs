// Fresh processes for measurements: Node (the one running the benchmark, or Node 24 from
// the node24 devDependency), Deno (the deno devDependency) and Java. Each prints its result
// as the last line of JSON on stdout (Deno: on stderr, because V8's --trace-gc lines go to
// stdout); the time spent is added up per label, to keep the run's length in check.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export const NODE24 = here("../node_modules/node24/bin/node");
export const DENO = here("../node_modules/.bin/deno");

/** Seconds spent per label. */
export const spent = {};

function run(label, file, args, { timeout = 1_800_000, env = process.env } = {}) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: "utf8", timeout, env, maxBuffer: 1 << 28 }, (error, stdout, stderr) => {
      spent[label] = (spent[label] ?? 0) + (performance.now() - t0) / 1000;
      if (error) reject(new Error(`${label}: ${error.message}\n${stderr.slice(-2000)}`));
      else resolve({ stdout, stderr });
    });
  });
}

const lastJson = (text) => JSON.parse(text.trim().split("\n").pop());

/** bench/child.mjs <task> <impl> ...args under `node` (a path; the running Node by default). */
export async function nodeChild(task, impl, args, node = process.execPath, env = process.env) {
  const flags = ["--expose-gc", "--max-old-space-size=8192"];
  const { stdout } = await run(
    `${task} ${impl}`,
    node,
    [...flags, here("./child.mjs"), task, impl, ...args.map(String)],
    {
      env,
    },
  );
  return lastJson(stdout);
}

/** bench/runtimes/deno-main.mjs under Deno with V8's --trace-gc: the result and the trace. */
export async function denoChild(impl, args) {
  const flags = ["run", "--allow-read", "--v8-flags=--expose-gc,--trace-gc,--max-old-space-size=8192"];
  const { stdout, stderr } = await run(`growth ${impl} (deno)`, DENO, [
    ...flags,
    here("./runtimes/deno-main.mjs"),
    impl,
    ...args.map(String),
  ]);
  return { result: lastJson(stderr), trace: stdout };
}

/** bench/java/DelayQueueBench.java in one JVM. */
export async function javaChild(args) {
  const { stdout } = await run("java", "java", ["-Xms1g", "-Xmx8g", here("./java/DelayQueueBench.java"), ...args]);
  return lastJson(stdout);
}
