// Loading the wasm: the one module that knows whether it is loaded, and from what, and the
// one module that imports the wasm-bindgen glue (dist/tarry.js).
//
// Node, Deno and workerd load it synchronously when their entry is imported (`loadSync`);
// a browser cannot read a file synchronously, and top-level await breaks bundlers (Vite's
// worker build, esbuild's iife, older targets), so the browser entry exports `init()` and a
// page awaits it once before its first queue. `init()` is exported by every entry: where
// the wasm is already loaded it resolves at once, so code written for the browser runs
// everywhere. Creating a queue or scheduler before `init()` has finished throws an error
// that says so, instead of failing somewhere inside the wasm glue.

import glueInit, { Deadlines as GlueDeadlines, initSync } from "../dist/tarry.js";

/** Why the binding refused an offer (what `Deadlines#offer` returns in place of a handle). */
export { Refused } from "../dist/tarry.js";

let loaded = false;

/** Compiles and instantiates the wasm from its bytes or a compiled WebAssembly.Module, now. */
export function loadSync(module) {
  initSync({ module });
  loaded = true;
}

/**
 * Loads the wasm once; later calls resolve at once (a call made while loading shares the
 * first one's load, whatever its source). `source`: where the wasm is, as a URL or string
 * (fetched), a Request, a Response or a promise of one, its bytes, or a WebAssembly.Module;
 * `fallback()` gives the entry's default location when `source` is undefined.
 * @param {unknown} [source]
 * @param {*} [fallback] needed only where the wasm is not loaded at import (the browser entry)
 */
export function init(source, fallback) {
  checkSource(source);
  if (loaded) return Promise.resolve();
  const from = source === undefined ? fallback() : source;
  return glueInit({ module_or_path: from }).then(
    () => {
      loaded = true;
    },
    (cause) => {
      const where = typeof from === "string" || from instanceof URL ? ` from ${from}` : "";
      throw new Error(
        `init(): could not load tarry's WebAssembly module${where}: ${cause?.message ?? cause}. ` +
          "If your bundler does not emit tarry_bg.wasm, pass where it is: init(url), or its bytes or a WebAssembly.Module.",
        { cause },
      );
    },
  );
}

function checkSource(source) {
  let ok;
  try {
    ok =
      source === undefined ||
      typeof source === "string" ||
      source instanceof URL ||
      source instanceof ArrayBuffer ||
      ArrayBuffer.isView(source) ||
      source instanceof WebAssembly.Module ||
      (typeof Request === "function" && source instanceof Request) ||
      (typeof Response === "function" && source instanceof Response) ||
      typeof source?.then === "function";
  } catch {
    ok = false; // a revoked Proxy: instanceof and reading `then` throw
  }
  if (ok) return;
  throw new TypeError(
    "init(source): source must be a URL or string, a Request, a Response (or a promise of one), " +
      `bytes (an ArrayBuffer or a typed array) or a WebAssembly.Module, got ${source === null ? "null" : typeof source}`,
  );
}

/** The wasm binding's class, which refuses to be used before the wasm is loaded. */
export class Deadlines extends GlueDeadlines {
  /** @param {[capacity: number]} args */
  constructor(...args) {
    ready();
    super(...args);
  }

  static maxItems() {
    ready();
    return GlueDeadlines.maxItems();
  }

  static slotMask() {
    ready();
    return GlueDeadlines.slotMask();
  }
}

function ready() {
  if (!loaded) {
    throw new Error(
      'tarry\'s WebAssembly module is not loaded yet: in a browser, `await init()` (import { init } from "tarry-queue") before creating a DelayQueue or Scheduler',
    );
  }
}
