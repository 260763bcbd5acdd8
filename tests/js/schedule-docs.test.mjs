// docs/schedules.md's example, run as written in a project whose node_modules/tarry-queue
// is this package, with the node that runs this test (20 or 24); it must print what the
// page says.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function block(lang, tag) {
  const page = readFileSync(join(root, "docs/schedules.md"), "utf8");
  const m = page.match(new RegExp(`\`\`\`${lang} ${tag}\\n([\\s\\S]*?)\`\`\``));
  assert.ok(m, `docs/schedules.md has no \`\`\`${lang} ${tag} block`);
  return m[1];
}

test("docs/schedules.md: the Scheduler example runs as written and prints what the page says", () => {
  const dir = mkdtempSync(join(tmpdir(), "tarry-docs-"));
  try {
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(root, join(dir, "node_modules", "tarry-queue"), "dir");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", dependencies: { "tarry-queue": "*" } }));
    writeFileSync(join(dir, "main.js"), block("js", "node-schedules"));
    const r = spawnSync(process.execPath, ["main.js"], { cwd: dir, encoding: "utf8", timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, block("text", "node-schedules-output"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
