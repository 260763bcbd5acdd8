// bench/loading's results as Markdown (bench/loading/results.md) and as the short quote of
// docs/browser.md (scripts/docs/figures.mjs), both from bench/loading/results.json.

// The variants of the page. `fetched` maps the inline module to nothing (an import map can
// remap any URL) and awaits init(url): the entry as it was before the wasm came inline.
export const VARIANTS = {
  inline: { label: "inline, no init()", init: "" },
  init: { label: "inline, await init() first", init: "await tarry.init();" },
  fetched: { label: ".wasm fetched: await init(url)", init: 'await tarry.init("/dist/tarry_bg.wasm");', stub: true },
  noFromHex: { label: "inline, no Uint8Array.fromHex (older browsers)", init: "", noFromHex: true },
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
/** "median (least)": a shared machine's noise only adds, so the least run bounds the cost from below. */
const spread = (xs) => `${ms(median(xs))} (${ms(Math.min(...xs))})`;
const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
const num = (n) => n.toLocaleString("en-US");

export function render({ meta, sizes, browser, runtimes }) {
  const lines = [];
  const p = (...l) => lines.push(...l);
  p(
    "# Loading tarry: bytes, time to the first queue, memory",
    "",
    `Written by \`npm run bench -- --loading\` (bench/loading/run.mjs) on ${meta.date.slice(0, 10)}, commit ${meta.commit}${meta.uncommittedCoreChanges ? " with uncommitted changes" : ""}, ${meta.cpu} (${meta.cores} cores, load ${meta.loadAverage.start[0].toFixed(2)} at the start), ${meta.rounds} rounds. Times are the median of the runs, and in parentheses the least (noise from other work on the machine only adds).`,
    "",
    "## Bytes",
    "",
    "gzip is `gzip -9` of the bytes (`scripts/build.sh` compresses the file, whose name in the header adds 14 bytes); brotli at quality 11.",
    "",
    "| what | bytes | gzip | brotli |",
    "| --- | ---: | ---: | ---: |",
    `| the wasm, \`dist/tarry_bg.wasm\` | ${num(sizes.wasm.raw)} | ${num(sizes.wasm.gzip)} | ${num(sizes.wasm.brotli)} |`,
  );
  for (const [name, w] of Object.entries(sizes.encodings))
    p(`| the wasm inline as a JS module: ${name} | ${num(w.raw)} | ${num(w.gzip)} | ${num(w.brotli)} |`);
  const a = sizes.app;
  p(
    "",
    "An app that creates one queue, bundled and minified by esbuild:",
    "",
    "| the app loads | JS | gzip | brotli |",
    "| --- | ---: | ---: | ---: |",
    `| the wasm inline (one file) | ${num(a.inline.raw)} | ${num(a.inline.gzip)} | ${num(a.inline.brotli)} |`,
    `| the JS without it, and the .wasm fetched | ${num(a.withoutInline.raw)} + ${num(sizes.wasm.raw)} | ${num(a.withoutInline.gzip)} + ${num(sizes.wasm.gzip)} = ${num(a.withoutInline.gzip + sizes.wasm.gzip)} | ${num(a.withoutInline.brotli)} + ${num(sizes.wasm.brotli)} = ${num(a.withoutInline.brotli + sizes.wasm.brotli)} |`,
    "",
    `## Chromium ${browser.version}: the first queue on a page`,
    "",
    "A page served gzipped from localhost, whose module imports the browser entry, creates a DelayQueue, offers an item due now and takes it. *First queue*: from the page's HTML received to the item taken (the module graph, the wasm, the first queue; the navigation before it is the same for every variant). *Blocks*: the first `new DelayQueue()` (decoding and compiling the inline wasm, when nothing loaded it before). *Cold*: a fresh context (empty HTTP cache, no code cache); *warm*: the same page reloaded three times, from the HTTP cache. *Throttled*: 10 Mbit/s, 40 ms round trips. *JS heap*: used after a full collection, cold, on localhost (the inline variants hold the hex string: about its length in bytes).",
    "",
    "| variant | first queue, cold | warm | throttled, cold | blocks, cold | blocks, warm | JS heap |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  for (const [id, v] of Object.entries(VARIANTS)) {
    const local = browser.samples[`${id}/localhost`];
    const slow = browser.samples[`${id}/throttled`];
    const m = (list, f) => spread(list.map(f));
    const first = (t) => t.taken - t.html;
    const blocks = (t) => t.constructed - t.loaded;
    // Without fromHex the decoder hands the hex to TextEncoder, and Blink then holds the
    // string's characters outside the JS heap: the heap no longer shows them.
    const heap = v.noFromHex ? "–" : kB(median(local.heap));
    p(
      `| ${v.label} | ${m(local.cold, first)} | ${m(local.warm, first)} | ${m(slow.cold, first)} | ${m(local.cold, blocks)} | ${m(local.warm, blocks)} | ${heap} |`,
    );
  }
  const c = browser.samples.compile;
  const cm = (k) => spread(c.map((t) => t[k]));
  p(
    "",
    `The first \`new DelayQueue()\` blocks for decoding and compiling the wasm, and for the first run of the queue's JS (which the *await init() first* row shows alone). Apart, in fresh contexts: decoding the hex takes ${cm("fromHex")} with \`Uint8Array.fromHex\` and ${cm("loop")} with the loop for engines without it; \`new WebAssembly.Module\` takes ${cm("compile")} (V8 compiles each function on its first call).`,
    "",
    "## Node and Deno: a fresh process's first queue",
    "",
    "From the process's start (its `performance.now()`) to the entry imported, and to a first item taken; *inline* is the entry as shipped (the wasm compiled on the first queue), *file* reads `dist/tarry_bg.wasm` and compiles it at import (bench/loading/node-file.mjs, deno-file.mjs).",
    "",
    "| runtime | inline: imported | first queue | file: imported | first queue |",
    "| --- | ---: | ---: | ---: | ---: |",
  );
  for (const name of runtimeNames(runtimes)) {
    const i = runtimes[`${name}/inline`];
    const f = runtimes[`${name}/file`];
    const m = (list, k) => spread(list.map((t) => t[k]));
    p(`| ${name} | ${m(i, "imported")} | ${m(i, "taken")} | ${m(f, "imported")} | ${m(f, "taken")} |`);
  }
  return `${lines.join("\n")}\n`;
}

/** "Node v20.20.2", "Deno 2.9.6", … in the order they ran. */
const runtimeNames = (runtimes) => [...new Set(Object.keys(runtimes).map((k) => k.split("/")[0]))];

/** docs/browser.md's quote: the inline wasm against the .wasm fetched, in one table (`up`: from the page to the root). */
export function quote({ meta, sizes, browser, runtimes }, up) {
  const a = sizes.app;
  const local = (id) => browser.samples[`${id}/localhost`];
  const slow = (id) => browser.samples[`${id}/throttled`];
  const med = (list, f) => ms(median(list.map(f)));
  const first = (t) => t.taken - t.html;
  const blocks = (t) => t.constructed - t.loaded;
  const heap = median(local("inline").heap) - median(local("fetched").heap);
  const compile = browser.samples.compile;
  const part = (k) => ms(median(compile.map((t) => t[k])));
  const gaps = runtimeNames(runtimes).map((name) => {
    const taken = (how) => median(runtimes[`${name}/${how}`].map((t) => t.taken));
    return `${name} ${(taken("inline") - taken("file")).toFixed(1)} ms`;
  });
  return [
    "| | the wasm inline, no `init()` | the `.wasm` fetched by `init(url)` |",
    "| --- | ---: | ---: |",
    `| an app with one queue (esbuild, minified), gzip | ${num(a.inline.gzip)} B, one file | ${num(a.withoutInline.gzip)} + ${num(sizes.wasm.gzip)} = ${num(a.withoutInline.gzip + sizes.wasm.gzip)} B, two |`,
    `| the same, brotli | ${num(a.inline.brotli)} B | ${num(a.withoutInline.brotli)} + ${num(sizes.wasm.brotli)} = ${num(a.withoutInline.brotli + sizes.wasm.brotli)} B |`,
    `| first queue after the HTML, cold (Chromium, localhost) | ${med(local("inline").cold, first)} | ${med(local("fetched").cold, first)} |`,
    `| the same, warm (reloaded from the HTTP cache) | ${med(local("inline").warm, first)} | ${med(local("fetched").warm, first)} |`,
    `| the same, cold, at 10 Mbit/s with 40 ms round trips | ${med(slow("inline").cold, first)} | ${med(slow("fetched").cold, first)} |`,
    `| main thread blocked by the first \`new DelayQueue()\`, cold | ${med(local("inline").cold, blocks)} (${med(local("init").cold, blocks)} after \`await init()\`) | ${med(local("fetched").cold, blocks)} |`,
    `| JS heap after a collection | +${kB(heap)} (the hex string) | |`,
    "",
    `Of the first queue's block, decoding the hex takes ${part("fromHex")} with \`Uint8Array.fromHex\` (Chrome 140, Firefox 133, Safari 18.2 and later) and ${part("loop")} with the loop used before them, and \`new WebAssembly.Module\` ${part("compile")}; the rest is the first run of the queue's JavaScript. A fresh Node or Deno process's first queue, inline minus reading the \`.wasm\` file at import: ${gaps.join(", ")}. Medians of ${meta.rounds} runs, from [the loading benchmark](${up}bench/loading/results.md) (\`npm run bench -- --loading\`), which has the machine, the date and every variant.`,
  ].join("\n");
}
