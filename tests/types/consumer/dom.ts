// Where the DOM's lib declares WebAssembly (browsers, bundlers): init() takes a compiled
// WebAssembly.Module, and the subpath "tarry-queue/tarry_bg.wasm" gives something it takes.
import { init } from "tarry-queue";
import wasm from "tarry-queue/tarry_bg.wasm";

declare const module: WebAssembly.Module;
await init(module);
await init(wasm);
await init(await WebAssembly.compileStreaming(fetch(new URL("tarry_bg.wasm", location.href))));
