// Browser entry (pages and workers; also what bundlers pick): nothing is loaded at import,
// because a browser can only fetch the wasm asynchronously and top-level await breaks
// bundlers. A page calls `await init()` once before its first queue; init() fetches
// tarry_bg.wasm next to this package's dist/ (bundlers that understand
// `new URL(..., import.meta.url)` emit it and rewrite the URL), or loads what it is given.
import { init as load } from "./wasm.js";
import { flushAll } from "./queue.js";

/**
 * Loads tarry's wasm; call once, and await it, before the first DelayQueue or Scheduler.
 * `source` (optional): where the wasm is (a URL or string, a Request, a Response or a
 * promise of one), its bytes, or a compiled WebAssembly.Module. Idempotent.
 */
export function init(source) {
  return load(source, () => new URL("../dist/tarry_bg.wasm", import.meta.url));
}

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
