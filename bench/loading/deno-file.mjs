// The Deno entry as it was before the wasm came inline, for comparison: reads the .wasm and
// compiles it at import (needs --allow-read).
import { loadSync } from "../../js/wasm.js";

loadSync(Deno.readFileSync(new URL("../../dist/tarry_bg.wasm", import.meta.url)));

export { DelayQueue } from "../../js/memory/queue.js";
