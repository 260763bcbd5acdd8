// Node entry (also Bun): the wasm comes inline with the JS (js/wasm.js) and is compiled on
// the first DelayQueue or Scheduler, so importing costs nothing until then and no file is
// read. No top-level await, so CommonJS can require() this module on the Node versions
// package.json's `engines` names (>= 20.19).
import { wasmHex } from "../dist/tarry_inline.js";
import { loadOnFirstUse } from "./wasm.js";

loadOnFirstUse(wasmHex);

export { DelayQueue } from "./memory/queue.js";
export { Scheduler } from "./memory/scheduler.js";
export { ClosedError } from "./engine/errors.js";
/** Optional: compiles the wasm asynchronously, or loads it from the source given (as in the browser). */
export { init } from "./wasm.js";
