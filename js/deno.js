// Deno entry: read the wasm next to this file (needs --allow-read for that folder).
import { initSync } from "../dist/tarry.js";

initSync({ module: Deno.readFileSync(new URL("../dist/tarry_bg.wasm", import.meta.url)) });

export { DelayQueue } from "./queue.js";
export { Scheduler } from "./scheduler.js";
export { ClosedError } from "./errors.js";
