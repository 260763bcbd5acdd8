// bench/workloads/growth.mjs under Deno, one run in a fresh process (bench/runtimes/deno.mjs
// starts it):
//
//   deno run --allow-read --v8-flags=--expose-gc,--trace-gc bench/runtimes/deno-main.mjs <impl> <n> <block>
//
// Prints the result as JSON on stderr; V8's --trace-gc lines go to stdout. `calibration` is
// performance.now() right after a forced gc(), whose trace line ties V8's clock to this one.
// No memory figure: Deno.memoryUsage().external leaves WebAssembly memories out (tarry read
// 10-12 bytes per item there, its values alone), so bytes per item come from Node.

import { IMPLS } from "../impls.mjs";
import { growth } from "../workloads/growth.mjs";

const [impl, n, block] = Deno.args;
const make = await IMPLS[impl].load();

globalThis.gc();
const calibration = performance.now();
const out = await growth(make, Number(n), { block: Number(block) });
console.error(JSON.stringify({ ...out, calibration, runtime: `Deno ${Deno.version.deno}` }));
