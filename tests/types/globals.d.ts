// What the type check of js/ (tsconfig.json) needs beyond the libs: the globals of runtimes
// other than Node, as far as tarry uses them.

/** workerd imports a .wasm file as a compiled module (js/workerd.js). */
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}

/** Deno's global, as js/deno.js and js/engine/timer.js use it. */
declare var Deno: {
  readFileSync(path: URL): Uint8Array;
  refTimer(id: number): void;
  unrefTimer(id: number): void;
};

/** Node's MessagePort can be ref'd and unref'd (js/engine/timer.js's keep-alive); the DOM's cannot. */
interface MessagePort {
  ref?(): void;
  unref?(): void;
}

/** Uint8Array.fromHex (ES2025; Chrome 140, Firefox 133, Safari 18.2), where the host has it (js/wasm.js). */
interface Uint8ArrayConstructor {
  fromHex?(hex: string): Uint8Array;
}

/** A Durable Object's `ctx.storage`, as js/durable/queue.js uses it (its public type: js/workerd.d.ts). */
type DurableObjectStorage = import("../../js/workerd.d.ts").DurableQueueStorage;
