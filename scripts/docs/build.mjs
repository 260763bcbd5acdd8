#!/usr/bin/env node
// `npm run docs`: what the docs hold that is generated, made again.
// - docs/api/: the API reference, by TypeDoc (and typedoc-plugin-markdown) from the shipped
//   .d.ts files (js/tarry.d.ts, js/workerd.d.ts, js/redis.d.ts, js/cron.d.ts, js/dashboard.d.ts; scripts/docs/typedoc.json),
//   so that it cannot drift from the types. Committed, so that it reads where the code is
//   hosted; tests/docs/generated.test.mjs fails when it differs from what the types give.
// - the benchmark figures quoted in README.md and docs/performance.md, from bench/results.json
//   and bench/redis/results.json (scripts/docs/figures.mjs), and the package's size, from
//   `npm pack --dry-run --json`.
//
//   node scripts/docs/build.mjs            writes them
//   node scripts/docs/build.mjs --api DIR  writes only the API reference, into DIR
//
// scripts/setup-docs.sh installs TypeDoc (scripts/docs/package-lock.json).

import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { root } from "./blocks.mjs";
import { data, QUOTING, requote } from "./figures.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));

/** Writes the API reference into `out` (emptied first). */
export function buildApi(out) {
  execFileSync("bash", [join(root, "scripts/setup-docs.sh")], { stdio: ["ignore", "ignore", "inherit"] });
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    join(here, "node_modules/.bin/typedoc"),
    ["--options", "typedoc.json", "--out", out, "--logLevel", "Warn", "--treatWarningsAsErrors"],
    { cwd: here, stdio: ["ignore", "inherit", "inherit"] },
  );
}

/** The API reference as it would be written now: { path relative to docs/api/: text }. */
export function freshApi() {
  const dir = mkdtempSync(join(tmpdir(), "tarry-api-"));
  try {
    buildApi(dir);
    const out = {};
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (e.isFile()) {
        const path = join(e.parentPath ?? e.path, e.name);
        out[relative(dir, path)] = readFileSync(path, "utf8");
      }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What `npm pack --dry-run` says of the package, and the wasm's gzipped size. */
export function measurePackage() {
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
  const [cmd, ...pre] = npm;
  const out = execFileSync(cmd, [...pre, "pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [pack] = JSON.parse(out);
  const wasmGzip = execFileSync("gzip", ["-9", "-c", join(root, "dist/tarry_bg.wasm")]).length;
  return { pack, wasmGzip };
}

/** Every page that quotes figures, as it would be written now: { file: text }. */
export function freshQuotes() {
  const d = { ...data(), package: measurePackage() };
  const out = {};
  for (const [file, up] of Object.entries(QUOTING)) out[file] = requote(readFileSync(join(root, file), "utf8"), d, up);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--api");
  if (i >= 0) {
    buildApi(process.argv[i + 1]);
  } else {
    buildApi(join(root, "docs/api"));
    for (const [file, text] of Object.entries(freshQuotes())) writeFileSync(join(root, file), text);
    console.log("docs: wrote docs/api/ and the quoted figures of", Object.keys(QUOTING).join(", "));
  }
}
