// The seams between the package's entries, followed import by import from package.json's
// `exports`: the in-memory entries never load the Redis code; the Redis entry never loads the
// wasm (it runs where dist/ was never built); js/wasm.js is the one module that imports the
// wasm-bindgen glue (dist/tarry.js); only the runtime entries name the wasm itself, each the
// way its runtime loads it (workerd the .wasm file, the others its bytes inline in
// dist/tarry_inline.js); the Durable engine (js/durable/) loads neither the wasm nor the Redis
// code; every module an entry reaches is one package.json's `files` ships; and the folders
// keep their layers: which folder of js/ may import which (the import rule below).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const jsDir = new URL("js/", root);

/** Static imports and re-exports of a module, and what it imports dynamically (not in comments: JSDoc types). */
function importsOf(url) {
  const src = readFileSync(url, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|\s)\/\/.*$/gm, "$1");
  const specs = [...src.matchAll(/(?:import|export)[^;]*?from\s+"([^"]+)"/g)].map((m) => m[1]);
  return { src, specs, dynamic: [...src.matchAll(/import\(\s*"([^"]+)"/g)].map((m) => m[1]) };
}

/** Every module of js/ an entry reaches, with what each imports: Map(url → specifiers). */
function graphOf(entry) {
  const seen = new Map();
  const visit = (url) => {
    if (seen.has(url.href)) return;
    const { specs, dynamic } = importsOf(url);
    seen.set(url.href, { specs, dynamic });
    for (const spec of [...specs, ...dynamic]) {
      const next = new URL(spec, url);
      if (spec.startsWith(".") && spec.endsWith(".js") && next.pathname.startsWith(jsDir.pathname)) visit(next);
    }
  };
  visit(new URL(entry, root));
  return seen;
}

const memoryEntries = Object.values(pkg.exports["."]).filter((p) => p.endsWith(".js"));
const redisEntry = pkg.exports["./redis"].default;

test("the in-memory entries do not import the Redis code", () => {
  const seen = new Set();
  const visit = (url) => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    const src = readFileSync(url, "utf8");
    for (const [, spec] of src.matchAll(/(?:import|export)[^;]*?from\s+"([^"]+)"/g)) {
      assert.ok(!/redis/.test(spec), `${url.pathname} imports ${spec}`);
      // Follow the JS face (js/); dist/ is wasm-bindgen's output, built by scripts/build.sh.
      const next = new URL(spec, url);
      if (spec.startsWith(".") && spec.endsWith(".js") && next.pathname.startsWith(jsDir.pathname)) visit(next);
    }
    assert.ok(!/import\(\s*"[^"]*redis/.test(src), `${url.pathname} imports Redis code dynamically`);
  };
  for (const entry of memoryEntries) visit(new URL(`../../${entry}`, import.meta.url));
  assert.ok(seen.size >= 4);
});

test("the Redis entry does not import the wasm, its loader or anything in dist/", () => {
  const graph = graphOf(redisEntry);
  assert.ok(graph.size >= 8, `only ${graph.size} modules followed`);
  for (const [url, { specs, dynamic }] of graph) {
    const file = url.slice(root.href.length);
    assert.notEqual(file, "js/wasm.js", "the Redis entry reaches js/wasm.js");
    for (const spec of specs) assert.ok(!spec.includes("dist/"), `${file} imports ${spec}`);
    // ioredis when given a URL; the cron rules (and croner) when a cron schedule needs them.
    for (const spec of dynamic) {
      const allowed = spec === "ioredis" || (file === "js/schedule/spec.js" && spec === "./cron.js");
      assert.ok(allowed, `${file} imports ${spec} dynamically`);
    }
  }
});

test("js/wasm.js alone imports the wasm-bindgen glue; only the runtime entries name the wasm file", () => {
  const modules = new Map();
  for (const entry of [...memoryEntries, redisEntry]) for (const [url, m] of graphOf(entry)) modules.set(url, m);
  const runtimeEntries = new Set(memoryEntries.map((e) => new URL(e, root).href));
  for (const [url, { specs }] of modules) {
    const file = url.slice(root.href.length);
    for (const spec of specs.filter((s) => s.includes("dist/"))) {
      if (spec.endsWith("/dist/tarry.js")) assert.equal(file, "js/wasm.js", `${file} imports ${spec}`);
      // The wasm itself: as a file (workerd imports a compiled module) or inline (the others).
      else
        assert.ok(
          runtimeEntries.has(url) && (spec.endsWith("/dist/tarry_bg.wasm") || spec.endsWith("/dist/tarry_inline.js")),
          `${file} imports ${spec}`,
        );
    }
    const { src } = importsOf(new URL(url));
    if (/dist\/tarry_bg\.wasm/.test(src)) assert.ok(runtimeEntries.has(url), `${file} names dist/tarry_bg.wasm`);
  }
  assert.ok(modules.has(new URL("js/wasm.js", root).href));
});

test("the Redis entry loads and checks its arguments where nothing resolves into dist/", () => {
  // A resolve hook that fails every import of dist/, as on a fresh clone that never built it.
  const hook = `export async function resolve(spec, context, next) {
    const r = await next(spec, context);
    if (r.url.includes("/dist/")) throw new Error("imported " + r.url);
    return r;
  }`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const program = `
    const { RedisDelayQueue, ClosedError } = await import("tarry-queue/redis");
    const q = new RedisDelayQueue({ redis: "redis://127.0.0.1:1", name: "seams" });
    const e = await q.offer(undefined, 5).catch((e) => e);
    if (!(e instanceof TypeError) || !/^value is undefined/.test(e.message)) throw new Error("no TypeError: " + e);
    if (typeof ClosedError !== "function") throw new Error("no ClosedError");
    console.log("ok");`;
  const r = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(register)}`, "--input-type=module", "-e", program],
    { cwd: fileURLToPath(root), encoding: "utf8", timeout: 30_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "ok");
});

test("the Durable engine (js/durable/) imports neither the wasm nor the Redis code", () => {
  const workerd = pkg.exports["."].workerd;
  const { specs } = importsOf(new URL(workerd, root));
  assert.ok(specs.includes("./durable/queue.js"), `${workerd} exports DurableDelayQueue from js/durable/queue.js`);
  const graph = graphOf("js/durable/queue.js");
  const files = [...graph.keys()].map((url) => url.slice(root.href.length));
  assert.ok(files.filter((f) => f.startsWith("js/durable/")).length >= 8, `only ${files} followed`);
  for (const [url, { specs, dynamic }] of graph) {
    const file = url.slice(root.href.length);
    assert.notEqual(file, "js/wasm.js", "the Durable engine reaches js/wasm.js");
    for (const spec of [...specs, ...dynamic]) {
      assert.ok(!spec.includes("dist/") && !/redis/.test(spec), `${file} imports ${spec}`);
    }
  }
});

test("every module an entry reaches is in package.json's files", () => {
  // `files` as npm reads these globs: a directory's *.js, or a path.
  const shipped = (file) =>
    pkg.files.some((glob) =>
      glob.endsWith("/*.js")
        ? file.startsWith(glob.slice(0, -4)) && !file.slice(glob.length - 4).includes("/") && file.endsWith(".js")
        : file === glob,
    );
  const entries = [
    ...Object.values(pkg.exports["."]),
    ...Object.values(pkg.exports)
      .map((e) => e.default)
      .filter((e) => typeof e === "string" && e.endsWith(".js")),
  ]
    .filter((e) => e.endsWith(".js"))
    .map((e) => e.replace(/^\.\//, ""));
  const reached = new Set();
  for (const entry of entries) for (const url of graphOf(entry).keys()) reached.add(url.slice(root.href.length));
  assert.ok(reached.has("js/durable/store.js"), "the workerd entry reaches js/durable/");
  for (const file of reached)
    assert.ok(shipped(file), `${file} is reached from an entry, and not in package.json's files`);
});

// The layers of js/, by folder. `memory/` (with `wasm.js`) is bound to the wasm; `engine/` is
// the plain JS every queue shares; each durable engine has its folder (and its entry file
// beside it); the entries at the top may import anything.
const LAYERS = {
  wasm: ["dist"],
  memory: ["memory", "wasm", "engine", "schedule"],
  engine: ["engine"],
  schedule: ["schedule", "engine"],
  redis: ["redis", "engine", "schedule"],
  postgres: ["postgres", "engine", "schedule"],
  durable: ["durable", "engine", "schedule"],
  dashboard: ["dashboard", "engine", "schedule"],
};

/** The layer of a file of the package (a path from the root), or "entry" for js/'s entries. */
function layerOf(file) {
  if (file.startsWith("dist/")) return "dist";
  if (file === "js/wasm.js") return "wasm";
  const m = /^js\/([\w-]+)(\/|\.js$)/.exec(file);
  if (!m) return "outside";
  if (m[2] === "/") return m[1];
  return ["redis", "postgres", "dashboard"].includes(m[1]) ? m[1] : "entry";
}

/** Every .js file under js/, as a path from the root. */
function jsFiles(dir = "js/") {
  return readdirSync(new URL(dir, root), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? jsFiles(`${dir}${d.name}/`) : d.name.endsWith(".js") ? [`${dir}${d.name}`] : [],
  );
}

/** A module's imports as statements (a line that starts with import or export) and import() calls. */
function statementsOf(url) {
  const { src, dynamic } = importsOf(url);
  return { specs: [...src.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]), dynamic };
}

/** What a file may not import, by the rule of its layer: each offending import, said. */
function forbiddenImports(file, { specs, dynamic }) {
  const layer = layerOf(file);
  if (layer === "entry") return [];
  const allowed = LAYERS[layer];
  const wrong = [];
  for (const spec of [...specs, ...dynamic]) {
    // The package's own root entry is the in-memory face, wasm and all.
    const target = spec.startsWith(".")
      ? layerOf(new URL(spec, new URL(file, root)).href.slice(root.href.length))
      : spec === "tarry-queue"
        ? "memory"
        : null;
    if (target === null) continue;
    if (target === "dist" && layer === "wasm" && !spec.endsWith("/dist/tarry.js"))
      wrong.push(`${file} imports ${spec}`);
    else if (!allowed.includes(target)) wrong.push(`${file} (${layer}) imports ${spec} (${target})`);
  }
  return wrong;
}

test("the import rule: engines and the shared folder never reach the wasm, engines not one another", () => {
  const files = jsFiles();
  const layers = new Set(files.map(layerOf));
  for (const layer of ["wasm", "memory", "engine", "redis", "postgres", "durable", "entry"])
    assert.ok(layers.has(layer), `no file of js/ is in the ${layer} layer`);
  const wrong = files.flatMap((file) => forbiddenImports(file, statementsOf(new URL(file, root))));
  assert.deepEqual(wrong, []);
});

test("the import rule refuses what it must", () => {
  const refused = (file, spec) => forbiddenImports(file, { specs: [spec], dynamic: [] }).length === 1;
  assert.ok(refused("js/postgres/inspect.js", "../redis/inspect.js"), "postgres may not import js/redis/");
  assert.ok(refused("js/redis/consumer.js", "../postgres/consumer.js"), "redis may not import js/postgres/");
  assert.ok(refused("js/postgres.js", "./redis/options.js"), "the Postgres entry may not import js/redis/");
  assert.ok(refused("js/durable/queue.js", "../memory/queue.js"), "durable may not import js/memory/");
  assert.ok(refused("js/engine/json.js", "../wasm.js"), "engine may not import the wasm");
  assert.ok(refused("js/engine/json.js", "../redis/keys.js"), "engine may not import an engine");
  assert.ok(refused("js/redis.js", "tarry-queue"), "the Redis entry may not import the in-memory face");
  assert.ok(refused("js/memory/slots.js", "../../dist/tarry.js"), "only js/wasm.js imports dist/");
  assert.ok(refused("js/wasm.js", "../dist/tarry_inline.js"), "js/wasm.js imports only dist/tarry.js");
  assert.ok(!refused("js/memory/queue.js", "../wasm.js"));
  assert.ok(!refused("js/postgres/consumer.js", "../engine/alarms.js"));
});
