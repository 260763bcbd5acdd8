// Every ```html browser block of README.md and docs/ (scripts/docs/blocks.mjs), loaded as a
// page in headless Chromium: the block is the page, served from a folder whose
// node_modules/tarry-queue is this package (as an import map or a bundler would find it).
// What the page logs with console.log is its output: it must equal the output block that
// follows the block, when there is one, and the page must throw nothing and log no error.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { blocksFor, root } from "../../scripts/docs/blocks.mjs";
import { serve } from "../../tools/serve.mjs";
import { args, executablePath } from "../../tools/chromium.mjs";

const blocks = blocksFor("browser");
const site = mkdtempSync(join(tmpdir(), "tarry-docs-site-"));
mkdirSync(join(site, "node_modules"));
symlinkSync(root, join(site, "node_modules", "tarry-queue"), "dir");
// tarry-queue's dependency (croner, for tarry-queue/cron), beside it as npm installs it.
symlinkSync(join(root, "node_modules", "croner"), join(site, "node_modules", "croner"), "dir");

let server;
let browser;
let profile;
before(async () => {
  server = await serve({ root: site });
  profile = mkdtempSync(join(tmpdir(), "tarry-chromium-"));
  browser = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args });
});
after(async () => {
  await browser?.close();
  await server?.close();
  rmSync(profile, { recursive: true, force: true });
  rmSync(site, { recursive: true, force: true });
});

test("the docs have browser blocks", () => {
  assert.ok(blocks.length >= 2, `${blocks.length} browser blocks`);
});

blocks.forEach((b, i) => {
  test(`${b.where}: loads as a page${b.output === undefined ? "" : " and logs its output block"}`, async () => {
    const file = `page-${i}.html`;
    // (No favicon request: its 404 would be logged as an error.)
    writeFileSync(
      join(site, file),
      `<!doctype html>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n${b.code}`,
    );
    const page = await browser.newPage();
    const logged = [];
    const problems = [];
    page.on("console", (m) => {
      if (m.type() === "log") logged.push(m.text());
      else if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    try {
      await page.goto(`${server.url}/${file}`);
      const want = b.output === undefined ? [] : b.output.replace(/\n$/, "").split("\n");
      // Until the page has logged as many lines as its output block has (or 15 s), then a
      // moment more for anything it should not log.
      const deadline = Date.now() + 15_000;
      while (logged.length < want.length && problems.length === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(problems, [], `${b.where}: no error on the page`);
      if (b.output !== undefined) assert.deepEqual(logged, want, `${b.where}: what the page logged`);
    } finally {
      await page.close();
    }
  });
});
