#!/usr/bin/env node
// What loading tarry costs: `npm run bench -- --loading` (about two minutes). Writes
// bench/loading/results.json and bench/loading/results.md.
//
// - Bytes: the wasm, its inline module (and what other encodings would weigh), and an app
//   bundle (esbuild, minified) with the inline wasm against the same bundle without it plus
//   the .wasm fetched beside it (the browser entry's way before the wasm came inline).
// - Chromium: a page whose module creates the first DelayQueue, offers and takes, timed from
//   navigation, in a fresh context (cold: empty HTTP and code caches) and reloaded (warm),
//   served gzipped from localhost, as it is and through a throttled link; how long the first
//   `new DelayQueue()` blocks the main thread; the JS heap after a collection.
// - Node 20 and 24, Deno: a fresh process importing the entry and taking a first item, with
//   the inline wasm against reading the .wasm file at import (the entries' way before).
//
//   --rounds R   fresh contexts and processes per variant (default 7)
//   --render     measures nothing: rewrites results.md from results.json

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { args as chromiumArgs, executablePath } from "../../tools/chromium.mjs";
import { provenance } from "../provenance.mjs";
import { render, VARIANTS } from "./report.mjs";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const log = (...a) => process.stderr.write(`[bench:loading] ${a.join(" ")}\n`);
const argv = process.argv.slice(2);
const rounds = Number(argv[argv.indexOf("--rounds") + 1] || 7);
if (argv.includes("--rounds") && !(Number.isInteger(rounds) && rounds > 0))
  throw new Error("--rounds takes a positive integer");

const run = provenance();
const wasmPath = join(root, "dist/tarry_bg.wasm");
const inlinePath = join(root, "dist/tarry_inline.js");

// ---- bytes ------------------------------------------------------------------------------

/** gzip -9 as scripts/build.sh measures it; brotli at its highest quality. */
const gzip9 = (bytes) => execFileSync("gzip", ["-9", "-c"], { input: bytes }).length; // from stdin: no name in the header
const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const weigh = (bytes) => ({ raw: bytes.length, gzip: gzip9(bytes), brotli: brotli(bytes) });

/** The wasm as a JS string literal module in each encoding considered. */
function encodings(wasm) {
  let latin1 = "";
  for (const b of wasm) {
    if (b === 0x5c) latin1 += "\\\\";
    else if (b === 0x22) latin1 += '\\"';
    else if (b === 0x0a) latin1 += "\\n";
    else if (b === 0x0d) latin1 += "\\r";
    else if (b === 0) latin1 += "\\x00";
    else latin1 += String.fromCharCode(b);
  }
  // esbuild's default (charset: ascii) writes every character above 0x7e as \xNN.
  const ascii = latin1.replace(/[\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
  const module = (s) => Buffer.from(`export const wasm = "${s}";\n`);
  return {
    "hex (shipped)": weigh(readFileSync(inlinePath)),
    base64: weigh(module(wasm.toString("base64"))),
    "Latin-1 string, UTF-8": weigh(module(latin1)),
    "Latin-1 string after esbuild (\\xNN)": weigh(module(ascii)),
  };
}

/** An app's bundle (esbuild, minified): with the inline wasm, and with it left out. */
async function appBundles() {
  const esbuildPath = join(root, "tests/bundlers/node_modules/esbuild/lib/main.js");
  if (!existsSync(esbuildPath)) throw new Error("esbuild is missing: run bash scripts/setup-consumers.sh");
  const esbuild = await import(esbuildPath);
  const app = `import { DelayQueue } from "tarry-queue";\nconst q = new DelayQueue();\nq.offer("x", 0);\nq.take().then(console.log);\n`;
  const bundle = async (withoutInline) => {
    const out = await esbuild.build({
      stdin: { contents: app, resolveDir: root, loader: "js" },
      bundle: true,
      minify: true,
      format: "esm",
      write: false,
      logLevel: "error",
      alias: { "tarry-queue": join(root, "js/web.js") },
      plugins: withoutInline
        ? [
            {
              name: "no-inline-wasm",
              setup(b) {
                b.onResolve({ filter: /tarry_inline\.js$/ }, () => ({ path: "inline", namespace: "stub" }));
                b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
                  contents: "export const wasmHex = undefined;",
                }));
              },
            },
          ]
        : [],
    });
    return Buffer.from(out.outputFiles[0].contents);
  };
  return { inline: weigh(await bundle(false)), withoutInline: weigh(await bundle(true)) };
}

// ---- Chromium ---------------------------------------------------------------------------

function pageHtml(variant) {
  const v = VARIANTS[variant];
  const map = v.stub ? { imports: { "/dist/tarry_inline.js": "/bench/loading/no-inline.js" } } : { imports: {} };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>first queue</title><link rel="icon" href="data:,">
${v.noFromHex ? "<script>delete Uint8Array.fromHex;</script>" : ""}
<script type="importmap">${JSON.stringify(map)}</script>
<script type="module">
  import * as tarry from "/js/web.js";
  const t = { html: performance.getEntriesByType("navigation")[0].responseEnd, imported: performance.now() };
  ${v.init}
  t.loaded = performance.now();
  const queue = new tarry.DelayQueue();
  t.constructed = performance.now();
  queue.offer("x", 0);
  await queue.take();
  t.taken = performance.now();
  queue.close();
  globalThis.result = t;
</script></head><body></body></html>
`;
}

// The parts of the first queue's block, each timed once per fresh context: decoding the hex
// (Uint8Array.fromHex, then js/wasm.js's loop for engines without it) and compiling it.
const COMPILE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>compile</title><link rel="icon" href="data:,">
<script type="module">
  import { wasmHex } from "/dist/tarry_inline.js";
  import { bytesOf } from "/js/wasm.js";
  const t0 = performance.now();
  const bytes = bytesOf(wasmHex);
  const t1 = performance.now();
  const fromHex = Uint8Array.fromHex;
  delete Uint8Array.fromHex;
  const again = bytesOf(wasmHex);
  Uint8Array.fromHex = fromHex;
  const t2 = performance.now();
  new WebAssembly.Module(bytes);
  const t3 = performance.now();
  globalThis.result = { native: typeof fromHex === "function", fromHex: t1 - t0, loop: t2 - t1, compile: t3 - t2, same: again.every((b, i) => b === bytes[i]) };
</script></head><body></body></html>
`;

/** The repository over HTTP, gzipped (level 6, as servers do), and the bench's pages. */
async function startServer() {
  const types = {
    ".js": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".html": "text/html; charset=utf-8",
  };
  const cache = new Map();
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    let body;
    let type;
    if (url.pathname === "/bench/loading/page.html") {
      body = Buffer.from(pageHtml(url.searchParams.get("variant")));
      type = types[".html"];
    } else if (url.pathname === "/bench/loading/compile.html") {
      body = Buffer.from(COMPILE_PAGE);
      type = types[".html"];
    } else if (url.pathname === "/bench/loading/no-inline.js") {
      body = Buffer.from("export const wasmHex = undefined;\n");
      type = types[".js"];
    } else {
      const file = resolve(join(root, url.pathname));
      if (!file.startsWith(root + sep) || !existsSync(file) || !types[extname(file)]) {
        res.writeHead(404).end();
        return;
      }
      body = readFileSync(file);
      type = types[extname(file)];
    }
    const key = `${url.pathname}?${url.search}`;
    if (!cache.has(key)) cache.set(key, gzipSync(body, { level: 6 }));
    res.writeHead(200, {
      "content-type": type,
      "content-encoding": "gzip",
      // Cacheable, so that a reload is served from the HTTP cache, as a returning visit is.
      "cache-control": "max-age=3600",
    });
    res.end(cache.get(key));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

// A slow link for the cold loads: 10 Mbit/s down, 2 up, 40 ms round trip.
const THROTTLED = { offline: false, latency: 40, downloadThroughput: 10e6 / 8, uploadThroughput: 2e6 / 8 };

async function loadOnce(page, url) {
  await page.goto(url);
  const handle = await page.waitForFunction(() => globalThis.result, null, { timeout: 30_000 });
  return handle.jsonValue();
}

async function measureBrowser(server) {
  const browser = await chromium.launch({ executablePath, headless: true, args: chromiumArgs });
  const version = browser.version();
  const samples = { compile: [] };
  try {
    // A first context warms the browser process up; its figures are not kept.
    const warmUp = await browser.newContext();
    await loadOnce(await warmUp.newPage(), `${server.url}/bench/loading/page.html?variant=inline`);
    await warmUp.close();
    for (let round = 0; round < rounds; round++) {
      const context = await browser.newContext();
      const compiled = await loadOnce(await context.newPage(), `${server.url}/bench/loading/compile.html`);
      await context.close();
      if (!compiled.native || !compiled.same) throw new Error(`compile page: ${JSON.stringify(compiled)}`);
      samples.compile.push(compiled);
      for (const variant of Object.keys(VARIANTS)) {
        for (const link of ["localhost", "throttled"]) {
          const context = await browser.newContext();
          const page = await context.newPage();
          const cdp = await context.newCDPSession(page);
          await cdp.send("Network.enable");
          if (link === "throttled") await cdp.send("Network.emulateNetworkConditions", THROTTLED);
          const url = `${server.url}/bench/loading/page.html?variant=${variant}`;
          const s = (samples[`${variant}/${link}`] ??= { cold: [], warm: [], heap: [] });
          s.cold.push(await loadOnce(page, url));
          if (link === "localhost") {
            await cdp.send("HeapProfiler.collectGarbage");
            s.heap.push((await cdp.send("Runtime.getHeapUsage")).usedSize);
          }
          // Warm: reloads from the HTTP cache; from the third visit on V8 uses its code cache.
          for (let i = 0; i < 3; i++) s.warm.push(await loadOnce(page, url));
          await context.close();
        }
      }
      log(`Chromium round ${round + 1}/${rounds}`);
    }
  } finally {
    await browser.close();
  }
  return { version, samples };
}

// ---- Node and Deno ----------------------------------------------------------------------

const node24 = join(root, "node_modules/node24/bin/node");
const deno = join(root, "node_modules/.bin/deno");
const RUNTIMES = {
  [`Node ${process.version}`]: {
    cmd: process.execPath,
    args: [],
    inline: "js/node.js",
    file: "bench/loading/node-file.mjs",
  },
  [`Node ${execFileSync(node24, ["--version"], { encoding: "utf8" }).trim()}`]: {
    cmd: node24,
    args: [],
    inline: "js/node.js",
    file: "bench/loading/node-file.mjs",
  },
  [`Deno ${execFileSync(deno, ["--version"], { encoding: "utf8" }).split(/\s/)[1]}`]: {
    cmd: deno,
    args: ["run", "--allow-read"],
    inline: "js/deno.js",
    file: "bench/loading/deno-file.mjs",
  },
};

function measureRuntimes() {
  const samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, r] of Object.entries(RUNTIMES)) {
      for (const how of ["inline", "file"]) {
        const p = spawnSync(r.cmd, [...r.args, here("./first-queue.mjs"), join(root, r[how])], { encoding: "utf8" });
        if (p.status !== 0) throw new Error(`${name} ${how}: ${p.stderr}`);
        (samples[`${name}/${how}`] ??= []).push(JSON.parse(p.stdout));
      }
    }
  }
  log(`Node and Deno: ${rounds} processes per variant`);
  return samples;
}

// ---- the run ----------------------------------------------------------------------------

/** results.md from the results, both formatted as the linter wants them (they are kept in the repository). */
function writeReport(results) {
  const report = render(results);
  writeFileSync(here("./results.md"), `<!-- written by bench/loading/run.mjs (${results.meta.date}) -->\n\n${report}`);
  execFileSync(
    join(root, "node_modules/.bin/biome"),
    ["format", "--write", here("./results.json"), here("./results.md")],
    {
      stdio: "ignore",
    },
  );
  return report;
}

if (argv.includes("--render")) {
  writeReport(JSON.parse(readFileSync(here("./results.json"), "utf8")));
  log("wrote bench/loading/results.md");
  process.exit(0);
}

const wasm = readFileSync(wasmPath);
const sizes = { wasm: weigh(wasm), encodings: encodings(wasm), app: await appBundles() };
log("bytes measured");
const server = await startServer();
let browser;
try {
  browser = await measureBrowser(server);
} finally {
  await server.close();
}
const runtimes = measureRuntimes();
const meta = run.finish({ rounds });
writeFileSync(here("./results.json"), `${JSON.stringify({ meta, sizes, browser, runtimes }, null, 1)}\n`);
process.stdout.write(`\n${writeReport({ meta, sizes, browser, runtimes })}`);
log(`done in ${meta.seconds} s; wrote bench/loading/results.md and results.json`);
