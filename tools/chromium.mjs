// Headless Chromium for the browser tests: Debian's /usr/bin/chromium (scripts/setup-browser.sh
// installs it) driven by playwright-core, with a fresh profile, and the repository served by
// tools/serve.mjs so that pages load /www/, /js/ and /dist/ as a site would.

import { after, before } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "./serve.mjs";

export const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const artifacts = fileURLToPath(new URL("../tests/artifacts/", import.meta.url));

export const args = [
  "--no-sandbox", // as root, and in containers
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Starts the server and a browser. `open(path)` gives a new page on the server, failing the
 * test later (in `close`) if any page threw an uncaught error.
 */
export async function launch({ viewport = { width: 1280, height: 900 } } = {}) {
  const server = await serve();
  const profile = mkdtempSync(join(tmpdir(), "tarry-chromium-"));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args, viewport });
  } catch (e) {
    await server.close();
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  const errors = [];
  return {
    url: server.url,
    context,
    errors,
    async open(path) {
      const page = await context.newPage();
      page.on("pageerror", (e) => errors.push(`${path}: ${e.message}`));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(`${path}: console.error: ${m.text()}`);
      });
      await page.goto(server.url + path);
      return page;
    },
    async close() {
      await context.close().catch(() => {});
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * One browser for a test file: launched before its tests and closed after them, when the
 * file fails if any page threw. `open(path)` as for `launch`.
 */
export function sharedBrowser(options) {
  let browser;
  before(async () => {
    browser = await launch(options);
  });
  after(async () => {
    await browser?.close();
    assert.deepEqual(browser?.errors ?? [], [], "no page threw");
  });
  return { open: (path) => browser.open(path) };
}

/** The directory for screenshots and the like (gitignored), created on demand. */
export function artifact(name) {
  mkdirSync(artifacts, { recursive: true });
  return join(artifacts, name);
}
