// Node entry: Node 20's fetch cannot read file: URLs, so read the wasm and instantiate it
// synchronously (which also lets CommonJS require() this module on Node >= 20.19).
import { readFileSync } from "node:fs";
import { initSync } from "../dist/tarry.js";

initSync({ module: readFileSync(new URL("../dist/tarry_bg.wasm", import.meta.url)) });

export { DelayQueue } from "./queue.js";
export { Scheduler } from "./scheduler.js";
export { ClosedError } from "./errors.js";
