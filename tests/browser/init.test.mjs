// Starting the browser entry: init() loads the wasm from its default URL or from what it is
// given (a URL, a promise of a Response, bytes, a compiled WebAssembly.Module), once; a queue
// made before it says to call init(); a failed load names what it tried and can be retried.
// Each page is a fresh module instance, so each test starts unloaded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sharedBrowser } from "./chromium.mjs";

const browser = sharedBrowser();

/** Runs `body(tarry)` on a fresh page with the browser entry imported; its result. */
async function onPage(body) {
  const page = await browser.open("/tests/browser/pages/blank.html");
  try {
    return await page.evaluate(`(async () => {
      const tarry = await import("/js/web.js");
      const order = async () => {
        const q = new tarry.DelayQueue();
        q.offer("b", 10);
        q.offer("a", 5);
        const got = [await q.take(), await q.take()];
        q.close();
        return got;
      };
      return (${body})(tarry, order);
    })()`);
  } finally {
    await page.close();
  }
}

test("before init(), a queue or scheduler says to call init(); after it, both work", async () => {
  const r = await onPage(`async ({ DelayQueue, Scheduler, init }, order) => {
    const errors = [];
    for (const make of [() => new DelayQueue(), () => new Scheduler(), () => DelayQueue.restore({ version: 1, size: 0, items: [] })]) {
      try { make(); errors.push(null); } catch (e) { errors.push(e.message); }
    }
    const first = init();
    const second = init(); // while loading: the same load
    await Promise.all([first, second]);
    const again = init("/this/url/is/never/fetched.wasm"); // loaded: resolves at once
    await again;
    return { errors, got: await order(), scheduler: new Scheduler().size };
  }`);
  assert.equal(r.errors.length, 3);
  for (const message of r.errors) assert.match(message, /not loaded yet: .*`await init\(\)`/);
  assert.deepEqual(r.got, ["a", "b"]);
  assert.equal(r.scheduler, 0);
});

test("init() takes a promise of a Response, bytes, or a compiled WebAssembly.Module", async () => {
  const sources = {
    response: `fetch("/dist/tarry_bg.wasm")`,
    bytes: `fetch("/dist/tarry_bg.wasm").then((r) => r.arrayBuffer())`,
    typedArray: `fetch("/dist/tarry_bg.wasm").then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b))`,
    module: `WebAssembly.compileStreaming(fetch("/dist/tarry_bg.wasm"))`,
    url: `Promise.resolve(new URL("/dist/tarry_bg.wasm", location.href))`,
  };
  for (const [kind, source] of Object.entries(sources)) {
    const got = await onPage(`async ({ init }, order) => {
      const source = ${source};
      await init(${kind === "response" ? "source" : "await source"});
      return order();
    }`);
    assert.deepEqual(got, ["a", "b"], kind);
  }
});

test("a bad source is refused by name; a failed load names its URL and can be retried", async () => {
  const r = await onPage(`async ({ init }, order) => {
    let refused, failed;
    try { await init(42); } catch (e) { refused = e; }
    try { await init("/tests/browser/pages/blank.html"); } catch (e) { failed = e; }
    await init();
    return { refused: [refused.name, refused.message], failed: failed.message, got: await order() };
  }`);
  assert.equal(r.refused[0], "TypeError");
  assert.match(r.refused[1], /^init\(source\): source must be a URL or string, .* got number$/);
  assert.match(
    r.failed,
    /^init\(\): could not load tarry's WebAssembly module from \/tests\/browser\/pages\/blank.html: /,
  );
  assert.deepEqual(r.got, ["a", "b"]);
});
