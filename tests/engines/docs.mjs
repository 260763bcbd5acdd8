// The docs' blocks of one engine, run as written: every ```js <engine> block of README.md and
// docs/ (scripts/docs/blocks.mjs), each against a server of its own (so each starts empty)
// named by an environment variable, from a file inside this package so that the engine's
// subpath ("tarry-queue/redis", "tarry-queue/postgres") resolves to it: it must exit 0 and,
// when an output block follows it, print exactly that. tests/redis/docs.test.mjs and
// tests/postgres/docs.test.mjs run it for their engine.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksFor, root } from "../../scripts/docs/blocks.mjs";

/**
 * Registers a test per block of `engine` (its blocks' language tag), and one that the docs
 * have at least `least` of them.
 * @param {string} engine
 * @param {{ least: number, start: () => Promise<{ url: string, stop: () => Promise<void> }>, variable: string }} how
 *   start: a fresh server; variable: the environment variable a block reads its URL from
 */
export function runDocBlocks(engine, { least, start, variable }) {
  const blocks = blocksFor(engine);

  test(`the docs have ${engine} blocks`, () => {
    assert.ok(blocks.length >= least, `${blocks.length} ${engine} blocks`);
  });

  for (const b of blocks) {
    test(`${b.where}: runs as written${b.output === undefined ? "" : " and prints its output block"}`, async () => {
      const server = await start();
      const dir = mkdtempSync(join(root, `.docs-${engine}-`));
      try {
        writeFileSync(join(dir, "main.mjs"), b.code);
        const r = spawnSync(process.execPath, ["main.mjs"], {
          cwd: dir,
          encoding: "utf8",
          timeout: 30_000,
          env: { ...process.env, [variable]: server.url },
        });
        assert.equal(r.status, 0, `${b.where} exited with ${r.status} (${r.signal ?? "no signal"}):\n${r.stderr}`);
        if (b.output !== undefined) assert.equal(r.stdout, b.output, `${b.where}: stdout`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await server.stop();
      }
    });
  }
}
