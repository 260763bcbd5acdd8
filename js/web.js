// Browser entry (window and workers; also bundlers): fetch and instantiate the wasm next to
// this file. Bundlers rewrite the `new URL(..., import.meta.url)` to the emitted asset.
import init from "../dist/tarry.js";
import { flushAll } from "./queue.js";

await init({ module_or_path: new URL("../dist/tarry_bg.wasm", import.meta.url) });

// A hidden tab's timers are throttled (to once a second, later once a minute): when the
// page is shown again, hand out whatever came due meanwhile at once, in order.
if (typeof document !== "undefined" && typeof document.addEventListener === "function") {
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") flushAll();
  });
}

export { DelayQueue } from "./queue.js";
export { Scheduler } from "./scheduler.js";
export { ClosedError } from "./errors.js";
