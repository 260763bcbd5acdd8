// Every ```js worker block of README.md and docs/ (scripts/docs/blocks.mjs), run in workerd
// through miniflare as a Worker's main module, with `tarry-queue` resolved as wrangler's
// bundler resolves it (package.json `exports`, condition "workerd") and the package's files
// as modules. The block's attributes say what wrangler.toml would: `do=BINDING:Class,...`
// binds each Durable Object class (SQLite-backed), `path=/x` the request (default "/").
// The response must be 200 and, when an output block follows, its body (plus a newline) the
// output. docs/workers.md's reminders block is run in depth by workerd.test.mjs.
//
//   node_modules/node24/bin/node --test tests/workerd/
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Miniflare } from "miniflare";
import { blocksFor, root } from "../../scripts/docs/blocks.mjs";
import { packageModules } from "./modules.mjs";

const blocks = blocksFor("worker");

test("the docs have worker blocks", () => {
  assert.ok(blocks.length >= 2, `${blocks.length} worker blocks`);
});

for (const b of blocks) {
  test(`${b.where}: answers a request in workerd${b.output === undefined ? "" : " with its output block"}`, async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const entry = `./${relative(root, join(root, pkg.exports["."].workerd))}`;
    const durableObjects = {};
    for (const pair of (b.attrs.do ?? "").split(",").filter(Boolean)) {
      const [binding, className] = pair.split(":");
      durableObjects[binding] = { className, useSQLite: true };
    }
    const mf = new Miniflare({
      modulesRoot: root,
      modules: [
        {
          type: "ESModule",
          path: join(root, "docs-example.js"),
          contents: b.code
            .replaceAll('from "tarry-queue"', `from ${JSON.stringify(entry)}`)
            .replaceAll(
              'from "tarry-queue/dashboard"',
              `from ${JSON.stringify(`./${pkg.exports["./dashboard"].default.slice(2)}`)}`,
            ),
        },
        ...packageModules(),
      ],
      compatibilityDate: "2025-09-01",
      durableObjects,
    });
    try {
      const res = await mf.dispatchFetch(`http://tarry.test${b.attrs.path ?? "/"}`);
      const body = await res.text();
      assert.equal(res.status, 200, `${b.where}: ${res.status} ${body}`);
      if (b.output !== undefined) assert.equal(`${body}\n`, b.output, `${b.where}: the response`);
    } finally {
      await mf.dispose();
    }
  });
}
