// The Node entry as it was before the wasm came inline, for comparison: reads the .wasm and
// compiles it at import.
import { readFileSync } from "node:fs";
import { loadSync } from "../../js/wasm.js";

loadSync(readFileSync(new URL("../../dist/tarry_bg.wasm", import.meta.url)));

export { DelayQueue } from "../../js/memory/queue.js";
