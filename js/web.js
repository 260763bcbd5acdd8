// Browser entry (pages and workers; also what bundlers pick). The wasm comes inline with the
// JS and is compiled on the first DelayQueue or Scheduler (js/wasm.js): nothing to call,
// fetch or configure. `init()` is optional: it compiles off the main thread, or loads the
// wasm from elsewhere.
import { wasmHex } from "../dist/tarry_inline.js";
import { loadOnFirstUse } from "./wasm.js";
import { flushAll } from "./memory/queue.js";

loadOnFirstUse(wasmHex);

// A hidden tab's timers are throttled (to once a second, later once a minute): when the
// page is shown again, hand out whatever came due meanwhile at once, in order.
if (typeof document !== "undefined" && typeof document.addEventListener === "function") {
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") flushAll();
  });
}

export { DelayQueue } from "./memory/queue.js";
export { Scheduler } from "./memory/scheduler.js";
export { ClosedError } from "./engine/errors.js";
/**
 * Optional. Without a source: compiles the inline wasm asynchronously, so that the first
 * queue does not compile it on the main thread. With one: loads the wasm from there instead
 * (a URL or string, a Request, a Response or a promise of one, its bytes, or a compiled
 * WebAssembly.Module); await it before the first queue. Idempotent.
 */
export { init } from "./wasm.js";
