// The consumer matrix: the packed tarball installed by path into a fresh project per bundler,
// the tiny app in app/ built (or served) by each, loaded in headless Chromium, the queue
// checked on the page and in a module worker (order with FIFO ties, cancel, a timed-out
// take, never early, the Scheduler), with no console error and no failed request.
// What each bundler needs is in `recipes` below, and in README.md's "Bundlers".
//
//   npm run test:bundlers     (scripts/setup-consumers.sh installs the bundlers first)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { args, executablePath } from "../browser/chromium.mjs";
import { pack, project } from "../packed.mjs";
import { serve } from "../../scripts/serve.mjs";

const app = fileURLToPath(new URL("app/", import.meta.url));

// The one line each needs, as the app's start.js (README.md's "Bundlers" quotes these).
const startWithInit = "export const start = (init) => init();\n";
const startWithWasmImport =
  'import wasm from "tarry-queue/tarry_bg.wasm";\n\nexport const start = (init) => init(wasm);\n';

const packed = pack();
let browser;
let profile;
before(async () => {
  profile = mkdtempSync(join(tmpdir(), "tarry-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args });
});
after(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
  packed.cleanup();
});

/** A fresh project with the tarball installed and the app's files (start.js as given). */
function appProject(name, start) {
  const dir = project(packed, name);
  cpSync(app, dir, { recursive: true });
  writeFileSync(join(dir, "start.js"), start);
  return dir;
}

/** Opens `url`, waits for the app's result, and checks it and the page's console. */
async function check(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  try {
    await page.goto(url);
    const handle = await page.waitForFunction(() => globalThis.result, null, { timeout: 30_000 });
    const result = await handle.jsonValue();
    assert.equal(result.error, undefined, result.error);
    for (const where of ["page", "worker"]) {
      const r = result[where];
      assert.equal(r.error, undefined, `${where}: ${r.error}`);
      assert.deepEqual(r.got, ["now", "a", "b1", "b2", "c"], `${where}: order`);
      assert.equal(r.cancelled, "paid", `${where}: cancel`);
      assert.deepEqual(r.early, [], `${where}: never early`);
      assert.equal(r.timedOut, true, `${where}: take({ timeout })`);
      assert.deepEqual(r.ran, [1, 2], `${where}: Scheduler order`);
    }
    assert.deepEqual(problems, [], "no console error, no failed request");
  } finally {
    await page.close();
  }
}

/** Serves a built folder (scripts/serve.mjs, .wasm as application/wasm) and checks its page. */
async function checkBuilt(dir) {
  const server = await serve({ root: dir });
  try {
    await check(`${server.url}/index.html`);
  } finally {
    await server.close();
  }
}

// Vite 7's dev server pre-bundles dependencies into node_modules/.vite/deps/, where the
// package's `new URL("../dist/tarry_bg.wasm", import.meta.url)` points nowhere: leave it out.
const viteVersions = {
  "Vite 8": { pkg: "vite", devConfig: {} },
  "Vite 7": { pkg: "vite7", devConfig: { optimizeDeps: { exclude: ["tarry-queue"] } } },
};

for (const [name, { pkg, devConfig }] of Object.entries(viteVersions)) {
  test(`${name} dev server: page and module worker`, async () => {
    const vite = await import(pkg);
    const dir = appProject(`${pkg}-dev`, startWithInit);
    const server = await vite.createServer({
      root: dir,
      configFile: false,
      logLevel: "silent",
      server: { host: "127.0.0.1", port: 0, strictPort: false },
      ...devConfig,
    });
    await server.listen();
    try {
      await check(server.resolvedUrls.local[0]);
    } finally {
      await server.close();
    }
  });

  test(`${name} build: page and module worker`, async () => {
    const vite = await import(pkg);
    const dir = appProject(`${pkg}-build`, startWithInit);
    await vite.build({
      root: dir,
      configFile: false,
      logLevel: "silent",
      build: { outDir: join(dir, "out") },
    });
    await checkBuilt(join(dir, "out"));
  });
}

test("webpack 5: page and module worker", async () => {
  const { default: webpack } = await import("webpack");
  const dir = appProject("webpack", startWithInit);
  const out = join(dir, "out");
  const stats = await new Promise((resolve, reject) =>
    webpack({ mode: "production", context: dir, entry: "./main.js", output: { path: out } }, (e, s) =>
      e ? reject(e) : resolve(s),
    ),
  );
  assert.ok(!stats.hasErrors(), stats.toString("errors-only"));
  writeFileSync(join(out, "index.html"), page("main.js", ""));
  await checkBuilt(out);
});

test("esbuild: page and module worker", async () => {
  const esbuild = await import("esbuild");
  const dir = appProject("esbuild", startWithWasmImport);
  const out = join(dir, "out");
  await esbuild.build({
    absWorkingDir: dir,
    entryPoints: ["main.js", "worker.js"],
    bundle: true,
    format: "esm",
    outdir: out,
    loader: { ".wasm": "file" },
    logLevel: "error",
  });
  writeFileSync(join(out, "index.html"), page("main.js", ' type="module"'));
  await checkBuilt(out);
});

test("Rollup: page and module worker", async () => {
  const { rollup } = await import("rollup");
  const { nodeResolve } = await import("@rollup/plugin-node-resolve");
  const { importMetaAssets } = await import("@web/rollup-plugin-import-meta-assets");
  const dir = appProject("rollup", startWithInit);
  const bundle = await rollup({
    input: [join(dir, "main.js"), join(dir, "worker.js")],
    // importMetaAssets() emits tarry_bg.wasm; told to leave the page's own
    // `new URL("./worker.js", import.meta.url)` alone, as Rollup builds the worker as an entry.
    plugins: [nodeResolve({ browser: true }), importMetaAssets({ exclude: join(dir, "main.js") })],
  });
  await bundle.write({ dir: join(dir, "out"), format: "es" });
  await bundle.close();
  writeFileSync(join(dir, "out", "index.html"), page("main.js", ' type="module"'));
  await checkBuilt(join(dir, "out"));
});

function page(script, type) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>app</title><link rel="icon" href="data:,"></head><body><script${type} src="./${script}"></script></body></html>\n`;
}
