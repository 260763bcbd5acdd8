// Cloudflare Workers entry: Workers forbid compiling wasm from bytes at run time, so the
// module is imported as a compiled WebAssembly.Module (wrangler and miniflare bundle it).
import wasm from "../dist/tarry_bg.wasm";
import { loadSync } from "./wasm.js";

loadSync(wasm);

export { DelayQueue } from "./memory/queue.js";
export { Scheduler } from "./memory/scheduler.js";
export { ClosedError } from "./engine/errors.js";
export { DurableDelayQueue } from "./durable/queue.js";
/** Loaded at import already: resolves at once (for code shared with the browser). */
export { init } from "./wasm.js";
