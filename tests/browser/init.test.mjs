// Loading the browser entry: importing it compiles nothing; the first DelayQueue, Scheduler
// or restore() compiles the inline wasm synchronously, once, with no call; init() without a
// source compiles it asynchronously instead; init(source) loads the wasm from a URL, a
// Response, bytes or a WebAssembly.Module, and a queue made before it settles says to await
// it; a failed load names what it tried and changes nothing; under a Content-Security-Policy
// that forbids compiling WebAssembly, the first queue says what to do, and a Module compiled
// by a worker loads through init(module). Each page is a fresh module instance, so each test
// starts unloaded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sharedBrowser } from "../../tools/chromium.mjs";

const browser = sharedBrowser();

/**
 * Runs `body(tarry, order, compiles)` on a fresh page at `path` with the browser entry
 * imported; its result. `compiles` counts how the page compiled wasm: { sync, async }
 * (WebAssembly.Module, and WebAssembly.compile / compileStreaming).
 */
async function onPage(body, path = "/tests/browser/pages/blank.html") {
  const page = await browser.open(path);
  try {
    return await page.evaluate(`(async () => {
      const compiles = { sync: 0, async: 0 };
      const Module = WebAssembly.Module;
      const counted = function (...args) { compiles.sync++; return Reflect.construct(Module, args, new.target ?? Module); };
      counted.prototype = Module.prototype;
      WebAssembly.Module = counted;
      for (const name of ["compile", "compileStreaming"]) {
        const original = WebAssembly[name];
        WebAssembly[name] = (...args) => { compiles.async++; return original.apply(WebAssembly, args); };
      }
      const tarry = await import("/js/web.js");
      const order = async () => {
        const q = new tarry.DelayQueue();
        // Deadline order, not call order: b is due 200 ms after a unless the two calls are
        // 200 ms apart (at 10 and 5 ms, a loaded machine's 5 ms gap between them made b first).
        q.offer("b", 300);
        q.offer("a", 100);
        const got = [await q.take(), await q.take()];
        q.close();
        return got;
      };
      return (${body})(tarry, order, compiles);
    })()`);
  } finally {
    await page.close();
  }
}

test("with no init(), importing compiles nothing and the first queue compiles the inline wasm, once", async () => {
  const r = await onPage(`async ({ DelayQueue, Scheduler }, order, compiles) => {
    const atImport = { ...compiles };
    const got = await order();
    const afterFirst = { ...compiles };
    const scheduler = new Scheduler();
    const ran = await new Promise((resolve) => scheduler.schedule(resolve, 1, "ran"));
    const restored = DelayQueue.restore({ version: 1, size: 0, items: [] }).size;
    return { atImport, afterFirst, got, ran, restored, end: { ...compiles } };
  }`);
  assert.deepEqual(r.atImport, { sync: 0, async: 0 });
  assert.deepEqual(r.afterFirst, { sync: 1, async: 0 });
  assert.deepEqual(r.got, ["a", "b"]);
  assert.equal(r.ran, "ran");
  assert.equal(r.restored, 0);
  assert.deepEqual(r.end, { sync: 1, async: 0 }, "compiled once");
});

test("without Uint8Array.fromHex (browsers before it), the inline wasm decodes as the .wasm file's bytes and loads", async () => {
  const r = await onPage(`async (tarry, order) => {
    const { wasmHex } = await import("/dist/tarry_inline.js");
    const { bytesOf } = await import("/js/wasm.js");
    const file = new Uint8Array(await (await fetch("/dist/tarry_bg.wasm")).arrayBuffer());
    const fromHex = Uint8Array.fromHex;
    delete Uint8Array.fromHex;
    try {
      const looped = bytesOf(wasmHex);
      const same = looped.length === file.length && looped.every((b, i) => b === file[i]);
      return { native: typeof fromHex, same, got: await order() };
    } finally {
      Uint8Array.fromHex = fromHex;
    }
  }`);
  assert.equal(r.native, "function", "Chromium has Uint8Array.fromHex (so the loop is what the test exercised)");
  assert.equal(r.same, true);
  assert.deepEqual(r.got, ["a", "b"]);
});

test("DelayQueue.restore() and a Scheduler are first uses too", async () => {
  for (const first of ["DelayQueue.restore({ version: 1, size: 0, items: [] })", "new Scheduler()"]) {
    const r = await onPage(`async ({ DelayQueue, Scheduler }, order, compiles) => {
      ${first};
      return { compiles: { ...compiles }, got: await order() };
    }`);
    assert.deepEqual(r.compiles, { sync: 1, async: 0 }, first);
    assert.deepEqual(r.got, ["a", "b"], first);
  }
});

test("init() without a source compiles asynchronously; a queue made meanwhile compiles at once, and both work", async () => {
  const r = await onPage(`async ({ DelayQueue, init }, order, compiles) => {
    const first = init();
    const second = init(); // while loading: the same load
    const same = first === second;
    await first;
    const awaited = { ...compiles, got: await order() };
    await init("/this/url/is/never/fetched.wasm"); // loaded: resolves at once
    return { same, awaited, end: { ...compiles } };
  }`);
  assert.equal(r.same, true);
  assert.deepEqual(r.awaited, { sync: 0, async: 1, got: ["a", "b"] });
  assert.deepEqual(r.end, { sync: 0, async: 1 });

  const meanwhile = await onPage(`async ({ DelayQueue, init }, order, compiles) => {
    const loading = init();
    const got = await order(); // before init() has settled
    await loading;
    return { got, again: await order(), compiles: { ...compiles } };
  }`);
  assert.deepEqual(meanwhile.got, ["a", "b"]);
  assert.deepEqual(meanwhile.again, ["a", "b"]);
  assert.deepEqual(meanwhile.compiles, { sync: 1, async: 1 });
});

test("init(source) takes a promise of a Response, bytes, a compiled WebAssembly.Module or a URL, instead of the inline wasm", async () => {
  const sources = {
    response: `fetch("/dist/tarry_bg.wasm")`,
    bytes: `fetch("/dist/tarry_bg.wasm").then((r) => r.arrayBuffer())`,
    typedArray: `fetch("/dist/tarry_bg.wasm").then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b))`,
    module: `WebAssembly.compileStreaming(fetch("/dist/tarry_bg.wasm"))`,
    url: `Promise.resolve(new URL("/dist/tarry_bg.wasm", location.href))`,
    string: `Promise.resolve("/dist/tarry_bg.wasm")`,
  };
  for (const [kind, source] of Object.entries(sources)) {
    const r = await onPage(`async ({ init }, order, compiles) => {
      const source = ${source};
      const before = compiles.async;
      await init(${kind === "response" ? "source" : "await source"});
      return { got: await order(), sync: compiles.sync, loads: compiles.async - before };
    }`);
    assert.deepEqual(r.got, ["a", "b"], kind);
    assert.equal(r.sync, 0, `${kind}: the inline wasm is not compiled`);
    assert.equal(r.loads, kind === "module" ? 0 : 1, kind);
  }
});

test("until init(source) has settled, a queue says to await it", async () => {
  const r = await onPage(`async ({ DelayQueue, Scheduler, init }, order, compiles) => {
    const loading = init("/dist/tarry_bg.wasm");
    const errors = [];
    for (const make of [() => new DelayQueue(), () => new Scheduler()]) {
      try { make(); errors.push(null); } catch (e) { errors.push(e.message); }
    }
    await loading;
    return { errors, got: await order(), sync: compiles.sync };
  }`);
  for (const message of r.errors)
    assert.match(message, /still loading from the source given to init\(\): await init\(source\)/);
  assert.deepEqual(r.got, ["a", "b"]);
  assert.equal(r.sync, 0);
});

test("a bad source is refused by name; a failed load names its URL, changes nothing and can be retried", async () => {
  const r = await onPage(`async ({ init }, order) => {
    let refused, failed;
    try { await init(42); } catch (e) { refused = e; }
    try { await init("/tests/browser/pages/blank.html"); } catch (e) { failed = e; }
    await init("/dist/tarry_bg.wasm");
    return { refused: [refused.name, refused.message], failed: failed.message, got: await order() };
  }`);
  assert.equal(r.refused[0], "TypeError");
  assert.match(r.refused[1], /^init\(source\): source must be a URL or string, .* got number$/);
  assert.match(
    r.failed,
    /^init\(\): could not load tarry's WebAssembly module from \/tests\/browser\/pages\/blank.html: .*Pass where it is/,
  );
  assert.deepEqual(r.got, ["a", "b"]);

  // After a failed init(source), nothing is loading any more: the first queue uses the inline wasm.
  const after = await onPage(`async ({ init }, order, compiles) => {
    await init("/tests/browser/pages/blank.html").catch(() => {});
    return { got: await order(), sync: compiles.sync };
  }`);
  assert.deepEqual(after, { got: ["a", "b"], sync: 1 });
});

test("where a Content-Security-Policy forbids compiling WebAssembly, the first queue says what to do, and init(module) takes a Module compiled by a worker", async () => {
  const r = await onPage(
    `async ({ DelayQueue, init }, order) => {
      let refused;
      try { new DelayQueue(); } catch (e) { refused = e.message; }
      // A dedicated worker has its own policy (none here): it compiles, and posts the Module.
      const worker = new Worker("/tests/browser/pages/compile-worker.js");
      const module = await new Promise((resolve, reject) => {
        worker.onmessage = (e) => resolve(e.data);
        worker.onerror = (e) => reject(new Error(e.message));
        setTimeout(() => reject(new Error("the worker sent nothing in 10 s")), 10_000);
      });
      worker.terminate();
      if (!(module instanceof WebAssembly.Module)) return { refused, module: String(module) };
      await init(module);
      return { refused, got: await order() };
    }`,
    "/tests/browser/pages/csp.html",
  );
  assert.match(r.refused, /^tarry could not compile its WebAssembly module: .*Content Security [Pp]olicy/);
  assert.match(
    r.refused,
    /needs 'wasm-unsafe-eval' in script-src; or compile the module elsewhere and pass it: await init\(module\)\.$/,
  );
  assert.deepEqual(r.got, ["a", "b"]);
});
