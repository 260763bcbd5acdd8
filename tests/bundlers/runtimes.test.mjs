// The packed tarball, installed by path into an empty folder, run by each runtime as a user
// would: the README's first and Node examples under Node 20 and 24 (and `require()` from
// CommonJS, which package.json's `engines` promises), the Node example under Bun, and the
// Deno example under Deno with `npm:tarry-queue` resolved from that folder's node_modules,
// also with no permission at all (the wasm comes inline: no file is read).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readmeExample } from "../readme.mjs";
import { pack, project, root } from "../packed.mjs";

const bin = (path) => fileURLToPath(new URL(path, import.meta.url));
const runtimes = {
  "Node 20": process.execPath,
  "Node 24": join(root, "node_modules/node24/bin/node"),
};
const bun = bin("node_modules/bun/bin/bun.exe");
const deno = join(root, "node_modules/.bin/deno");

const readme = readFileSync(join(root, "README.md"), "utf8");
const firstExample = readme.match(/```js\n([\s\S]*?)```/)[1];
const nodeExample = readmeExample("js", "node");
const nodeOutput = readmeExample("text", "node-output");

const packed = pack();
after(packed.cleanup);
const dir = project(packed, "runtimes", {
  "first.js": firstExample,
  "node.js": nodeExample,
  "main.ts": readmeExample("ts", "deno"),
  "required.cjs": `const { DelayQueue } = require("tarry-queue");
const q = new DelayQueue();
q.offer("b", 10);
q.offer("a", 5);
Promise.all([q.take(), q.take()]).then((got) => console.log(...got));
`,
});

const run = (cmd, args) => spawnSync(cmd, args, { cwd: dir, encoding: "utf8", timeout: 30_000 });

for (const [name, node] of Object.entries(runtimes)) {
  test(`${name}: the README's first example runs as written`, () => {
    const r = run(node, ["first.js"]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "{ orderId: 43 }\n");
  });

  test(`${name}: the README's Node example prints what the README says`, () => {
    const r = run(node, ["node.js"]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, nodeOutput);
  });

  test(`${name}: require("tarry-queue") from CommonJS`, () => {
    const r = run(node, ["required.cjs"]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "a b\n");
    // Node 20 may warn that require() of ESM is experimental; nothing worse.
    assert.doesNotMatch(r.stderr, /Error\b/);
  });
}

test(`Bun: the README's Node example prints what the README says`, () => {
  const version = run(bun, ["--version"]).stdout.trim();
  const r = run(bun, ["node.js"]);
  assert.equal(r.status, 0, r.stderr);
  // Bun's console.log lays an array of objects out over several lines: compare the text alone.
  const text = (s) => s.replace(/\s+/g, "").replace(/,([}\]])/g, "$1");
  assert.equal(text(r.stdout), text(nodeOutput), `bun ${version}: ${r.stdout}`);
});

test("Deno: the README's Deno example type-checks and runs, npm:tarry-queue from node_modules", () => {
  const check = run(deno, ["check", "main.ts"]);
  assert.equal(check.status, 0, check.stderr);
  const r = run(deno, ["run", "--allow-read", "main.ts"]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, readmeExample("text", "deno-output"));
});

test("Deno: the README's Deno example runs with no permission", () => {
  const r = run(deno, ["run", "--no-prompt", "main.ts"]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, readmeExample("text", "deno-output"));
});
