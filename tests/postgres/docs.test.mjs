// Every ```js postgres block of README.md and docs/ (scripts/docs/blocks.mjs), run as written
// with POSTGRES_URL naming a private Postgres cluster (one per block, so each starts empty),
// from a file inside this package so that "tarry-queue/postgres" resolves to it: it must exit 0
// and, when an output block follows it, print exactly that.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksFor, root } from "../../scripts/docs/blocks.mjs";
import { startPostgres } from "../../tools/postgres-server.mjs";

const blocks = blocksFor("postgres");

test("the docs have postgres blocks", () => {
  assert.ok(blocks.length >= 1, `${blocks.length} postgres blocks`);
});

for (const b of blocks) {
  test(`${b.where}: runs as written${b.output === undefined ? "" : " and prints its output block"}`, async () => {
    const server = await startPostgres();
    const dir = mkdtempSync(join(root, ".docs-postgres-"));
    try {
      writeFileSync(join(dir, "main.mjs"), b.code);
      const r = spawnSync(process.execPath, ["main.mjs"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 30_000,
        env: { ...process.env, POSTGRES_URL: server.url },
      });
      assert.equal(r.status, 0, `${b.where} exited with ${r.status} (${r.signal ?? "no signal"}):\n${r.stderr}`);
      if (b.output !== undefined) assert.equal(r.stdout, b.output, `${b.where}: stdout`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await server.stop();
    }
  });
}
