// The package's types as a TypeScript user meets them: the packed tarball installed by path
// into a fresh project, the typed consumers in tests/types/consumer/ and the README's first
// and Node examples checked by `tsc --strict` with TypeScript 5.9 and 7, under
// moduleResolution bundler, node16 and nodenext, with the DOM's lib, with @types/node, with
// `lib: ["es2022"]` alone, and as a Workers project (customConditions ["workerd"]). Then
// @arethetypeswrong/cli on the tarball.
//
//   node --test tests/types/            (scripts/setup-consumers.sh installs the tools)
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { readmeExample } from "../readme.mjs";
import { pack, project, root } from "../packed.mjs";
import { limited } from "./two-at-once.mjs";

const run = promisify(execFile);
const tools = fileURLToPath(new URL("node_modules/", import.meta.url));
const compilers = {
  "TypeScript 5.9": join(tools, "typescript/bin/tsc"),
  "TypeScript 7": join(tools, "typescript7/bin/tsc"),
};

const packed = pack();
after(packed.cleanup);

const readme = (await import("node:fs")).readFileSync(join(root, "README.md"), "utf8");
const dir = project(packed, "consumer", {
  // The README's first example and its Node example, as written.
  "readme.ts": readme.match(/```js\n([\s\S]*?)```/)[1],
  "readme-node.ts": readmeExample("js", "node"),
});
cpSync(fileURLToPath(new URL("consumer/", import.meta.url)), dir, { recursive: true });

const resolutions = {
  bundler: { module: "esnext", moduleResolution: "bundler" },
  node16: { module: "node16", moduleResolution: "node16" },
  nodenext: { module: "nodenext", moduleResolution: "nodenext" },
};
const everywhere = [
  "main.ts",
  "readme.ts",
  "readme-node.ts",
  "not-workerd.ts",
  "schedules.ts",
  "redis.ts",
  "inspect.ts",
];
const projects = {
  "lib dom": { lib: ["es2022", "dom"], types: [], files: [...everywhere, "dom.ts"] },
  "@types/node": { lib: ["es2022"], types: ["node"], typeRoots: [join(tools, "@types")], files: everywhere },
  "lib es2022 alone": { lib: ["es2022"], types: [], files: ["bare.ts"] },
  "Workers (customConditions workerd)": {
    lib: ["es2022"],
    types: [],
    customConditions: ["workerd"],
    files: ["workerd.ts"],
  },
};

let n = 0;
for (const [compiler, tsc] of Object.entries(compilers)) {
  for (const [resolution, resolutionOptions] of Object.entries(resolutions)) {
    for (const [kind, { files, ...options }] of Object.entries(projects)) {
      const config = `tsconfig.${n++}.json`;
      const compilerOptions = { strict: true, noEmit: true, target: "es2022", skipLibCheck: false };
      Object.assign(compilerOptions, resolutionOptions, options);
      writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files }, null, 2));
      // Started now, all of them (two at a time); each test waits for its own.
      const result = limited(() =>
        run(process.execPath, [tsc, "-p", config], { cwd: dir, encoding: "utf8" }).catch((e) => e),
      );
      test(`${compiler}, moduleResolution ${resolution}, ${kind}: tsc --strict passes`, async () => {
        const r = await result;
        assert.equal(r.code ?? 0, 0, `${r.stdout}${r.stderr}`);
      });
    }
  }
}

test("@arethetypeswrong/cli finds no problem but CommonJS require() of ESM, which needs Node >= 20.19", async () => {
  const r = await run(
    process.execPath,
    [join(tools, "@arethetypeswrong/cli/dist/index.js"), packed.tarball, "--format", "json"],
    {
      encoding: "utf8",
    },
  ).catch((e) => e);
  const { analysis } = JSON.parse(r.stdout);
  // attw models TypeScript's node16 resolution from a CommonJS file, where require() cannot
  // load ESM; Node can from 20.19 and 22.12 on, which is what package.json's `engines` says
  // (tests/bundlers/runtimes.test.mjs require()s the package on Node 20 and 24).
  const problems = analysis.problems.filter((p) => p.kind !== "CJSResolvesToESM");
  assert.deepEqual(problems, []);
  for (const p of analysis.problems) assert.equal(p.resolutionKind, "node16-cjs");
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(analysis.entrypoints).map(([k, e]) => [k, e.resolutions.bundler.resolution?.fileName]),
    ),
    {
      ".": "/node_modules/tarry-queue/js/tarry.d.ts",
      "./tarry_bg.wasm": "/node_modules/tarry-queue/tarry_bg.wasm.d.ts",
      "./redis": "/node_modules/tarry-queue/js/redis.d.ts",
      "./postgres": "/node_modules/tarry-queue/js/postgres.d.ts",
      "./cron": "/node_modules/tarry-queue/js/cron.d.ts",
      "./dashboard": "/node_modules/tarry-queue/js/dashboard.d.ts",
      "./package.json": "/node_modules/tarry-queue/package.json",
    },
  );
});
