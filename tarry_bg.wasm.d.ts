// Types of `import wasm from "tarry-queue/tarry_bg.wasm"` (at the package root, where tools
// that ignore `exports` look for it): whatever the bundler's loader for
// .wasm files gives (a URL string from Vite, esbuild's `file` loader and webpack's
// `asset/resource`; bytes from esbuild's `binary` loader; a WebAssembly.Module in Workers).
// Every one of these is something init() accepts: `await init(wasm)`, for those who load
// the wasm from a file rather than from the package's JS (where it comes inline).
import type { WasmSource } from "./js/tarry.js";

declare const wasm: WasmSource;
export default wasm;
