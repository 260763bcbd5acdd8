// Every ```js node block of README.md and docs/ (scripts/docs/blocks.mjs), run as written
// in a fresh project whose node_modules/tarry-queue is this package, with the node that runs
// this test (20 or 24): it must exit 0 and, when an output block follows it, print exactly
// that.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blocksFor, root } from "../../scripts/docs/blocks.mjs";

/** Runs `code` as main.js of a fresh project whose node_modules/tarry-queue is this package. */
function runInProject(code) {
  const dir = mkdtempSync(join(tmpdir(), "tarry-docs-"));
  try {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(root, join(dir, "node_modules", "tarry-queue"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "tarry-queue": "*" } }));
    writeFileSync(join(dir, "main.js"), code);
    return spawnSync(process.execPath, ["main.js"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const blocks = blocksFor("node");

test("the docs have node blocks", () => {
  assert.ok(blocks.length >= 5, `${blocks.length} node blocks`);
});

for (const b of blocks) {
  test(`${b.where}: runs as written${b.output === undefined ? "" : " and prints its output block"}`, () => {
    const r = runInProject(b.code);
    assert.equal(r.status, 0, `${b.where} exited with ${r.status} (${r.signal ?? "no signal"}):\n${r.stderr}`);
    if (b.output !== undefined) assert.equal(r.stdout, b.output, `${b.where}: stdout`);
  });
}
