// Every JS and TS code block of README.md and docs/ (scripts/docs/blocks.mjs) type-checks
// under `tsc --strict --module nodenext` (TypeScript 5.9 and 7), as written, in a fresh
// project that imports `tarry-queue` by its name (node_modules/tarry-queue is this package,
// as in tests/js/docs.test.mjs). The runners run the blocks; this checks that a strict
// TypeScript user who copies one gets no error. JS blocks are checked with checkJs, so their
// types come from inference and JSDoc. Each runner gets the types of the place it runs in:
//
//   node, redis, node-test   @types/node (node-test: with @sinonjs/fake-timers' own types)
//   browser                  lib dom (the page's `<script type="module">`)
//   deno                     lib dom (Deno's web globals); `npm:tarry-queue` is `tarry-queue`
//   worker                   lib webworker, the package's workerd types (condition
//                            "workerd", as wrangler resolves it) and docs-workers.d.ts (the
//                            names of @cloudflare/workers-types that the blocks use)
//
// An error is reported at its place in the page ("docs/redis.md:40:7: error TS2339: ...").
//
//   node --test tests/types/docs.test.mjs    (a step of scripts/types.sh)
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { collect, root } from "../../scripts/docs/blocks.mjs";
import { limited } from "./two-at-once.mjs";

const run = promisify(execFile);
const tools = fileURLToPath(new URL("node_modules/", import.meta.url));
const compilers = {
  "TypeScript 5.9": join(tools, "typescript/bin/tsc"),
  "TypeScript 7": join(tools, "typescript7/bin/tsc"),
};

/** Each runner's project: its compiler options beyond the common ones. */
const node = { lib: ["es2022"], types: ["node"], typeRoots: [join(tools, "@types")] };
const environments = {
  node: { options: node, what: "@types/node" },
  redis: { options: node, what: "@types/node" },
  postgres: { options: node, what: "@types/node" },
  "node-test": { options: node, what: "@types/node" },
  browser: { options: { lib: ["es2022", "dom", "dom.iterable"], types: [] }, what: "lib dom" },
  deno: { options: { lib: ["es2022", "dom", "dom.iterable"], types: [] }, what: "lib dom" },
  worker: {
    options: { lib: ["es2022", "webworker"], types: [], customConditions: ["workerd"] },
    what: "lib webworker and the workerd types",
    extra: ["docs-workers.d.ts"],
  },
};
const common = {
  strict: true,
  noEmit: true,
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
  target: "es2022",
  module: "nodenext",
  moduleResolution: "nodenext",
  pretty: false,
};

/** The packages the blocks import besides tarry-queue, and where their tests install them. */
const packageHomes = [join(root, "node_modules"), join(root, "tests/fake-timers/node_modules")];

/**
 * The program of block `b` as a file whose line N is the block's line N, column for column:
 * an HTML block keeps only its module scripts (the rest blanked to spaces); a Deno block
 * imports `npm:tarry-queue` by its name. `export {}` keeps every file a module.
 */
function programOf(b) {
  let code = b.code;
  if (b.lang === "html") {
    let kept = "";
    let at = 0;
    for (const m of code.matchAll(/(<script type="module">)([\s\S]*?)<\/script>/g)) {
      kept += blank(code.slice(at, m.index + m[1].length)) + m[2];
      at = m.index + m[1].length + m[2].length;
    }
    code = kept + blank(code.slice(at));
  }
  if (b.runner === "deno") code = code.replaceAll(/(["'])npm:tarry-queue/g, "$1tarry-queue");
  return `${code}\nexport {};\n`;
}
const blank = (s) => s.replace(/[^\n]/g, " ");

const blocks = collect().filter((b) => environments[b.runner] && ["js", "ts", "html"].includes(b.lang));

const dir = mkdtempSync(join(tmpdir(), "tarry-docs-types-"));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "node_modules"));
writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "tarry-queue": "*" } }));
symlinkSync(root, join(dir, "node_modules", "tarry-queue"), "dir");
const linked = new Set(["tarry-queue"]);
copyFileSync(fileURLToPath(new URL("docs-workers.d.ts", import.meta.url)), join(dir, "docs-workers.d.ts"));

/** The file of each block, by its name in tsc's messages. */
const fileOf = new Map();
const byRunner = {};
for (const b of blocks) {
  const name = `${b.runner}/${b.file.replace(/\.md$/, "").replaceAll("/", "-")}-${b.line}.${b.lang === "ts" ? "ts" : "js"}`;
  mkdirSync(join(dir, b.runner), { recursive: true });
  writeFileSync(join(dir, name), programOf(b));
  fileOf.set(name, b);
  (byRunner[b.runner] ??= []).push(name);
  for (const m of b.code.matchAll(/from\s+["']((?:@[^/"']+\/)?[^/"':]+)/g)) {
    const pkg = m[1].split("/")[0];
    if (linked.has(pkg)) continue;
    const home = packageHomes.find((h) => existsSync(join(h, pkg)));
    if (!home) continue; // a builtin of the runtime (node:…) or a missing package, which tsc reports
    symlinkSync(join(home, pkg), join(dir, "node_modules", pkg), "dir");
    linked.add(pkg);
    // A package without types of its own (pg) is typed by its DefinitelyTyped package.
    const typed = join(home, "@types", pkg);
    if (!pkg.startsWith("@") && existsSync(typed)) {
      mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
      symlinkSync(typed, join(dir, "node_modules", "@types", pkg), "dir");
    }
  }
}

/** tsc's errors per block, each at its place in the page (and the compiler's name). */
const errors = new Map(blocks.map((b) => [b, []]));
const unplaced = [];
const checks = [];
for (const [runner, files] of Object.entries(byRunner)) {
  const env = environments[runner];
  const config = `tsconfig.${runner}.json`;
  writeFileSync(
    join(dir, config),
    JSON.stringify(
      { compilerOptions: { ...common, ...env.options }, files: [...files, ...(env.extra ?? [])] },
      null,
      2,
    ),
  );
  for (const [compiler, tsc] of Object.entries(compilers)) checks.push(limited(() => check(compiler, tsc, config)));
}

/** Runs one compiler on one project; files its errors under their blocks. */
async function check(compiler, tsc, config) {
  const r = await run(process.execPath, [tsc, "-p", config], { cwd: dir, encoding: "utf8" }).catch((e) => e);
  let last = unplaced; // an indented line goes on the message before it
  let placed = 0;
  for (const line of `${r.stdout ?? ""}${r.stderr ?? ""}`.split("\n").filter(Boolean)) {
    const m = line.match(/^(.+?)\((\d+),(\d+)\): (.*)$/);
    const b = m && fileOf.get(m[1]);
    if (/^\s/.test(line) && last.length > 0) last[last.length - 1] += `\n${line}`;
    else if (b) {
      (last = errors.get(b)).push(`${b.file}:${b.line + Number(m[2])}:${m[3]}: ${m[4]} (${compiler})`);
      placed++;
    } else (last = unplaced).push(`${compiler}: ${line}`);
  }
  // A compiler that failed to start, or stopped without an error to show, fails here too.
  const code = r.code ?? 0;
  if (code !== 0 && placed === 0) unplaced.push(`${compiler}: tsc -p ${config} exited with ${code}: ${r.message}`);
  return code;
}

test("the docs have JS and TS blocks of every runner that runs them", () => {
  for (const runner of Object.keys(environments))
    assert.ok(byRunner[runner]?.length > 0, `no ${runner} block to type-check`);
});

test("tsc reports nothing outside the docs' blocks", async () => {
  await Promise.all(checks);
  assert.deepEqual(unplaced, []);
});

for (const b of blocks) {
  test(`${b.file}:${b.line} (${b.runner}, ${environments[b.runner].what}): tsc --strict finds no error`, async () => {
    await Promise.all(checks);
    assert.deepEqual(errors.get(b), [], `${b.file}:${b.line}:\n${errors.get(b).join("\n")}`);
  });
}
