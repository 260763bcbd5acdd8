// Deno entry: the wasm comes inline with the JS (js/wasm.js) and is compiled on the first
// DelayQueue or Scheduler, so it needs no permission (no file is read).
import { wasmHex } from "../dist/tarry_inline.js";
import { loadOnFirstUse } from "./wasm.js";

loadOnFirstUse(wasmHex);

export { DelayQueue } from "./memory/queue.js";
export { Scheduler } from "./memory/scheduler.js";
export { ClosedError } from "./engine/errors.js";
/** Optional: compiles the wasm asynchronously, or loads it from the source given (as in the browser). */
export { init } from "./wasm.js";
