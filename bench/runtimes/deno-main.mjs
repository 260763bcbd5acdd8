// bench/growth.mjs under Deno, one run in a fresh process (bench/runtimes/deno.mjs starts it):
//
//   deno run --allow-read --v8-flags=--expose-gc,--trace-gc bench/runtimes/deno-main.mjs <impl> <n> <block>
//
// Prints the result as JSON on stderr; V8's --trace-gc lines go to stdout. `calibration` is
// performance.now() right after a forced gc(), whose trace line ties V8's clock to this one.

import { growth } from "../workloads/growth.mjs";
import { IMPLS } from "../impls.mjs";

const [impl, n, block] = Deno.args;
const make = await IMPLS[impl].load();
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

async function memoryInUse() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await turn();
  }
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

globalThis.gc();
const calibration = performance.now();
const out = await growth(make, Number(n), { block: Number(block), memory: memoryInUse });
console.error(JSON.stringify({ ...out, calibration, runtime: `Deno ${Deno.version.deno}` }));
