// Loading the wasm: the one module that knows whether it is loaded, and from what, and the
// one module that imports the wasm-bindgen glue (dist/tarry.js).
//
// The browser, Node and Deno entries hand over the wasm's bytes, inline in a JS module
// (dist/tarry_inline.js, written by scripts/build.sh), and nothing is compiled at import: the
// first DelayQueue or Scheduler (the first Deadlines) decodes and compiles them
// synchronously, so no bundler has an asset to emit, no page a file to fetch, no user a
// call to make. Synchronous compilation is allowed in workers and in Node and Deno, and on a
// browser's main thread for modules of this size (Chromium refuses it above 8 MB). Costs: the
// hex in the JS (twice the wasm's bytes, about 1.1 times its gzip), and once per realm the
// decoding and the compile, on the thread that creates the first queue (V8 compiles each
// function lazily, on its first call); `npm run bench -- --loading` measures them.
//
// The workerd entry imports the .wasm as a compiled WebAssembly.Module (Workers refuse to
// compile bytes at run time) and loads it at import (`loadSync`).
//
// `init(source?)`, exported by every entry, is optional: without a source it compiles the
// inline bytes asynchronously (off the main thread), to keep even that compile off a page's
// first queue; with one it loads the wasm from there instead: a URL, a Response, bytes, or a
// WebAssembly.Module compiled elsewhere (a page whose Content-Security-Policy forbids
// compiling WebAssembly can take one from a worker allowed to). Until an init(source) has
// settled, creating a queue throws an error that says to await it: the source it was given
// is what gets loaded, never the inline bytes behind its back. The module is instantiated
// once per JS realm (a page and each of its workers each have their own).
//
// Hex rather than base64: each byte stays two characters, so gzip still finds the wasm's
// repeats (the module gzips to ~1.1x the wasm's gzip; base64 ~1.3x), and it is plain ASCII
// that no minifier or served charset rewrites.

import { Deadlines as GlueDeadlines, initSync } from "../dist/tarry.js";

/** Why the binding refused an offer (what `Deadlines#offer` returns in place of a handle). */
export { Refused } from "../dist/tarry.js";

let loaded = false;
/** The promise of an init() in progress, and whether it was given a source. */
let loading;
let loadingGiven = false;
/** The wasm as hex, for the entries that bring it inline (undefined in workerd). */
let inlineHex;

/** Instantiates the wasm from a compiled WebAssembly.Module (or its bytes), now. */
export function loadSync(module) {
  initSync({ module });
  loaded = true;
}

/** The entry's wasm, as hex: compiled synchronously by the first Deadlines if nothing loaded it before. */
export function loadOnFirstUse(hex) {
  inlineHex = hex;
}

/**
 * Loads the wasm once, asynchronously; later calls resolve at once (a call made while
 * loading shares the first one's load, whatever its source). `source`: where the wasm is,
 * as a URL or string (fetched), a Request, a Response or a promise of one, its bytes, or a
 * WebAssembly.Module; undefined for the entry's inline bytes.
 * @param {unknown} [source]
 */
export function init(source) {
  checkSource(source);
  if (loaded) return Promise.resolve();
  if (loading) return loading;
  if (source === undefined && inlineHex === undefined) {
    return Promise.reject(new Error("init(): this entry has no inline wasm; pass where it is: init(source)"));
  }
  const given = source !== undefined;
  loading = compile(given ? source : bytesOf(inlineHex)).then(
    (module) => {
      loading = undefined;
      // A queue made meanwhile (allowed only without a source) may have compiled the inline
      // bytes already: the glue instantiates once, so this is then a no-op.
      if (!loaded) loadSync(module);
    },
    (cause) => {
      loading = undefined;
      const where = typeof source === "string" || source instanceof URL ? ` from ${source}` : "";
      throw new Error(
        `init(): could not load tarry's WebAssembly module${where}: ${String(cause?.message ?? cause).replace(/\.$/, "")}. ` +
          "Pass where it is: init(url), or its bytes or a WebAssembly.Module; or call no init() at all.",
        { cause },
      );
    },
  );
  loadingGiven = given;
  return loading;
}

/** A compiled WebAssembly.Module from any source init() takes, off the main thread where it can. */
async function compile(source) {
  let from = await source;
  if (from instanceof WebAssembly.Module) return from;
  if (typeof from === "string" || from instanceof URL || (typeof Request === "function" && from instanceof Request)) {
    from = await fetch(from);
  }
  if (typeof Response === "function" && from instanceof Response) {
    if (!from.ok) throw new Error(`HTTP ${from.status} ${from.statusText} from ${from.url}`);
    // compileStreaming needs the wasm media type; anything else is read whole, then compiled.
    if (typeof WebAssembly.compileStreaming === "function" && from.headers.get("content-type") === "application/wasm") {
      return WebAssembly.compileStreaming(from);
    }
    from = await from.arrayBuffer();
  }
  return WebAssembly.compile(from);
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

/** The bytes of a hex string (two lowercase digits per byte, as scripts/build.sh writes them). */
export function bytesOf(hex) {
  if (typeof Uint8Array.fromHex === "function") return Uint8Array.fromHex(hex);
  // Node and Bun.
  if (typeof globalThis.Buffer?.from === "function") return globalThis.Buffer.from(hex, "hex");
  // Elsewhere (browsers before Uint8Array.fromHex), a loop that runs once, cold: one table
  // load per byte, the table indexed by each pair of ASCII digits read as one 16-bit unit
  // (in the platform's byte order, as the table is built).
  const ascii = new TextEncoder().encode(hex);
  const pairs = new Uint16Array(ascii.buffer, 0, ascii.length >>> 1);
  const table = new Uint8Array(0x10000);
  const pair = new Uint8Array(2);
  const unit = new Uint16Array(pair.buffer);
  const digits = "0123456789abcdef";
  for (let b = 0; b < 256; b++) {
    pair[0] = digits.charCodeAt(b >> 4);
    pair[1] = digits.charCodeAt(b & 15);
    table[unit[0]] = b;
  }
  const bytes = new Uint8Array(pairs.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = table[pairs[i]];
  return bytes;
}

/** The wasm binding's class, loading the wasm on first use. */
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
  if (loaded) return;
  if (loading && loadingGiven) {
    throw new Error(
      "tarry's WebAssembly module is still loading from the source given to init(): await init(source) before creating a DelayQueue or Scheduler",
    );
  }
  if (inlineHex === undefined) {
    throw new Error(
      'tarry\'s WebAssembly module is not loaded: `await init(source)` (import { init } from "tarry-queue") first',
    );
  }
  try {
    loadSync(bytesOf(inlineHex));
  } catch (cause) {
    throw new Error(
      `tarry could not compile its WebAssembly module: ${String(cause?.message ?? cause).replace(/\.$/, "")}. ` +
        "A Content-Security-Policy that forbids compiling WebAssembly needs 'wasm-unsafe-eval' in script-src; " +
        "or compile the module elsewhere and pass it: await init(module).",
      { cause },
    );
  }
}
