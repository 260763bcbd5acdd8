// README.md's Node example (under ## Runtimes), run as written in a project whose
// node_modules/tarry-queue is this package, with the node that runs this test (20 or 24).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readmeExample } from "../readme.mjs";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs `code` as main.js of a fresh project whose node_modules/tarry-queue is this package. */
function runInProject(code) {
  const dir = mkdtempSync(join(tmpdir(), "tarry-readme-"));
  try {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(root, join(dir, "node_modules", "tarry-queue"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "tarry-queue": "*" } }));
    writeFileSync(join(dir, "main.js"), code);
    return spawnSync(process.execPath, ["main.js"], { cwd: dir, encoding: "utf8", timeout: 20_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("README: the Node example runs as written and prints what the README says", () => {
  const r = runInProject(readmeExample("js", "node"));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, readmeExample("text", "node-output"));
  assert.match(r.stderr, /job failed: Error: a failing job stops nothing/);
});

test("README: the first example runs as written", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const r = runInProject(readme.match(/```js\n([\s\S]*?)```/)[1]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "{ orderId: 43 }\n");
});
