// The zero-config matrix: the packed tarball installed by path, the tiny app in app/ built (or
// served) by each bundler with no configuration beyond where its input and output are (no
// plugin for tarry, no loader option, no init() call), and the same app unbundled with an
// import map (plain/). Each loads in headless Chromium, where the queue is checked on the
// page, in a module worker and in a classic worker (order with FIFO ties, cancel, a timed-out
// take, never early, the Scheduler), with no console error or warning, no failed request,
// no .wasm fetched and none emitted: the wasm comes inline with the package's JS.
//
// A classic worker cannot use import statements: with a bundler it is the one classic script
// the bundler builds from a worker that imports the package (Vite and webpack build it from
// `new Worker(new URL("./classic-worker.js", import.meta.url))`, esbuild and Rollup as an
// iife entry); unbundled, it loads the package with import().
//
//   npm run test:bundlers     (scripts/setup-consumers.sh installs the bundlers first)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { args, executablePath } from "../../tools/chromium.mjs";
import { pack, project } from "../packed.mjs";
import { serve } from "../../tools/serve.mjs";

const app = fileURLToPath(new URL("app/", import.meta.url));
const plain = fileURLToPath(new URL("plain/", import.meta.url));
const viteApp = fileURLToPath(new URL("vite/", import.meta.url));

const packed = pack();
let installed;
let browser;
let profile;
before(async () => {
  installed = project(packed, "installed");
  profile = mkdtempSync(join(tmpdir(), "tarry-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args });
});
after(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  packed.cleanup();
});

/** A fresh project folder with the installed tarball and the app's files (then `overlay`'s). */
function appProject(name, overlay) {
  const dir = join(packed.dir, name);
  mkdirSync(dir);
  cpSync(join(installed, "node_modules"), join(dir, "node_modules"), { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name, private: true, type: "module" })}\n`);
  cpSync(app, dir, { recursive: true });
  if (overlay) cpSync(overlay, dir, { recursive: true });
  return dir;
}

/**
 * Opens `url`, waits for the app's results, and checks them and everything the page did.
 * `scopes`: where the page's module and classic workers are expected to have run.
 */
async function check(url, scopes = { module: "module worker", classic: "classic worker" }) {
  const page = await browser.newPage();
  const problems = [];
  const wasm = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`);
  });
  // Requests of the page and of its workers (playwright reports both on the page's context).
  const onRequest = (r) => {
    if (/\.wasm(\?|$)/.test(r.url())) wasm.push(r.url());
  };
  const onFailed = (r) => problems.push(`request failed: ${r.url()}`);
  const onResponse = (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  };
  browser.on("request", onRequest);
  browser.on("requestfailed", onFailed);
  browser.on("response", onResponse);
  try {
    await page.goto(url);
    const handle = await page.waitForFunction(() => globalThis.result, null, { timeout: 30_000 });
    const result = await handle.jsonValue();
    assert.equal(result.error, undefined, result.error);
    for (const [where, scope] of Object.entries({ page: "page", ...scopes })) {
      const r = result[where];
      assert.equal(r.error, undefined, `${where}: ${r.error}`);
      assert.equal(r.scope, scope, `${where}: ran in a ${scope}`);
      assert.deepEqual(r.got, ["now", "a", "b1", "b2", "c"], `${where}: order`);
      assert.equal(r.cancelled, "paid", `${where}: cancel`);
      assert.deepEqual(r.early, [], `${where}: never early`);
      assert.equal(r.timedOut, true, `${where}: take({ timeout })`);
      assert.deepEqual(r.ran, [1, 2], `${where}: Scheduler order`);
    }
    assert.deepEqual(problems, [], "no console error or warning, no failed request");
    assert.deepEqual(wasm, [], "no .wasm fetched");
  } finally {
    browser.off("request", onRequest);
    browser.off("requestfailed", onFailed);
    browser.off("response", onResponse);
    await page.close();
  }
}

/** Checks that a build emitted no .wasm, then serves it (tools/serve.mjs) and checks its page. */
async function checkBuilt(dir, { built = true, scopes } = {}) {
  if (built) {
    const emitted = readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith(".wasm"));
    assert.deepEqual(emitted, [], "the build emitted no .wasm");
  }
  const server = await serve({ root: dir });
  try {
    await check(`${server.url}/index.html`, scopes);
  } finally {
    await server.close();
  }
}

const vites = { "Vite 6": "vite6", "Vite 7": "vite7", "Vite 8": "vite" };

for (const [name, pkg] of Object.entries(vites)) {
  test(`${name} dev server: page, module worker, classic worker (import())`, async () => {
    const vite = await import(pkg);
    const dir = appProject(`${pkg}-dev`, viteApp);
    const server = await vite.createServer({
      root: dir,
      configFile: false,
      logLevel: "silent",
      server: { host: "127.0.0.1", port: 0, strictPort: false },
    });
    await server.listen();
    try {
      await check(server.resolvedUrls.local[0]);
    } finally {
      await server.close();
    }
  });

  test(`${name} build: page, module worker, classic worker`, async () => {
    const vite = await import(pkg);
    const dir = appProject(`${pkg}-build`);
    await vite.build({ root: dir, configFile: false, logLevel: "silent", build: { outDir: join(dir, "out") } });
    await checkBuilt(join(dir, "out"));
  });

  // The dev server's classic worker (import()) built too: Vite 8 as it is; Vite 6 and 7 build
  // a classic worker as one iife only with Rollup's inlineDynamicImports.
  const inline = pkg === "vite" ? {} : { worker: { rollupOptions: { output: { inlineDynamicImports: true } } } };
  test(`${name} build: the classic worker with import()${pkg === "vite" ? "" : ", inlineDynamicImports"}`, async () => {
    const vite = await import(pkg);
    const dir = appProject(`${pkg}-build-import`, viteApp);
    await vite.build({
      root: dir,
      configFile: false,
      logLevel: "silent",
      build: { outDir: join(dir, "out") },
      ...inline,
    });
    await checkBuilt(join(dir, "out"));
  });
}

test("webpack 5: page, module worker, classic worker", async () => {
  const { default: webpack } = await import("webpack");
  const dir = appProject("webpack");
  const out = join(dir, "out");
  const stats = await new Promise((resolve, reject) =>
    webpack({ mode: "production", context: dir, entry: "./main.js", output: { path: out } }, (e, s) =>
      e ? reject(e) : resolve(s),
    ),
  );
  assert.ok(!stats.hasErrors(), stats.toString("errors-only"));
  assert.ok(!stats.hasWarnings(), stats.toString("errors-warnings"));
  writeFileSync(join(out, "index.html"), page("main.js", ""));
  // webpack builds every worker as a classic script (ES module output is an experiment of
  // its own), `{ type: "module" }` or not.
  await checkBuilt(out, { scopes: { module: "classic worker", classic: "classic worker" } });
});

test("esbuild: page, module worker, classic worker", async () => {
  const esbuild = await import("esbuild");
  const dir = appProject("esbuild");
  const out = join(dir, "out");
  const common = { absWorkingDir: dir, bundle: true, outdir: out, logLevel: "warning" };
  // esbuild does not follow `new URL("./worker.js", import.meta.url)`: the workers are entries.
  await esbuild.build({ ...common, entryPoints: ["main.js", "worker.js"], format: "esm" });
  await esbuild.build({ ...common, entryPoints: ["classic-worker.js"], format: "iife" });
  writeFileSync(join(out, "index.html"), page("main.js", ' type="module"'));
  await checkBuilt(out);
});

test("Rollup: page, module worker, classic worker", async () => {
  const { rollup } = await import("rollup");
  // What any Rollup build needs to find packages in node_modules; nothing for tarry.
  const { nodeResolve } = await import("@rollup/plugin-node-resolve");
  const dir = appProject("rollup");
  const out = join(dir, "out");
  const warnings = [];
  const build = async (input, format) => {
    const bundle = await rollup({
      input,
      plugins: [nodeResolve({ browser: true })],
      onwarn: (w) => warnings.push(w.message),
    });
    await bundle.write({ dir: out, format, entryFileNames: "[name].js" });
    await bundle.close();
  };
  // Rollup leaves `new URL("./worker.js", import.meta.url)` as it is: the workers are entries.
  await build([join(dir, "main.js"), join(dir, "worker.js")], "es");
  await build(join(dir, "classic-worker.js"), "iife");
  assert.deepEqual(warnings, []);
  writeFileSync(join(out, "index.html"), page("main.js", ' type="module"'));
  await checkBuilt(out);
});

test("plain ES modules with an import map, no build: page, module worker, classic worker", async () => {
  // Served as it is, node_modules included (where the package's .wasm is too, unfetched).
  await checkBuilt(appProject("plain", plain), { built: false });
});

function page(script, type) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>app</title><link rel="icon" href="data:,"></head><body><script${type} src="./${script}"></script></body></html>\n`;
}
