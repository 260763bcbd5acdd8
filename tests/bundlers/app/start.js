// How the app starts tarry with a bundler that emits the wasm by itself (Vite, webpack,
// Rollup with its import-meta-assets plugin): `await init()`. The test writes this file.
export const start = (init) => init();
