// A classic worker with no Content-Security-Policy of its own: compiles tarry's wasm at once
// and posts the WebAssembly.Module to the page (init.test.mjs, for a page whose policy
// forbids compiling).
WebAssembly.compileStreaming(fetch("/dist/tarry_bg.wasm")).then(
  (module) => postMessage(module),
  (e) => postMessage(String(e)),
);
