// Deno entry: read the wasm next to this file (needs --allow-read for that folder).
import { loadSync } from "./wasm.js";

loadSync(Deno.readFileSync(new URL("../dist/tarry_bg.wasm", import.meta.url)));

export { DelayQueue } from "./queue.js";
export { Scheduler } from "./scheduler.js";
export { ClosedError } from "./errors.js";
/** Loaded at import already: resolves at once (for code shared with the browser). */
export { init } from "./wasm.js";
