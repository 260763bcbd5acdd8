// Node entry (also Bun): Node 20's fetch cannot read file: URLs, so read the wasm and
// instantiate it synchronously at import. No top-level await, so CommonJS can require()
// this module on the Node versions package.json's `engines` names (>= 20.19).
import { readFileSync } from "node:fs";
import { loadSync } from "./wasm.js";

loadSync(readFileSync(new URL("../dist/tarry_bg.wasm", import.meta.url)));

export { DelayQueue } from "./queue.js";
export { Scheduler } from "./scheduler.js";
export { ClosedError } from "./errors.js";
/** Loaded at import already: resolves at once (for code shared with the browser). */
export { init } from "./wasm.js";
