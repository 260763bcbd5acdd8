// What `npm run docs` generates (scripts/docs/build.mjs) is current in the repository:
// docs/api/ is what TypeDoc makes of the shipped .d.ts files now, and every figure quoted
// in README.md, docs/performance.md and docs/browser.md is what the benchmarks' results.json files say (the
// package's size: within 10 % of what `npm pack --dry-run` says now, so that a small change
// to the code does not make the README wrong but a large one does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { root } from "../../scripts/docs/blocks.mjs";
import { freshApi, freshQuotes } from "../../scripts/docs/build.mjs";
import { QUOTING, quotesIn } from "../../scripts/docs/figures.mjs";

const RUN = "run `npm run docs` and commit what it writes";

test("docs/api/ is the API reference TypeDoc generates from the .d.ts files now", () => {
  const fresh = freshApi();
  const dir = join(root, "docs/api");
  const committed = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) committed[relative(dir, join(e.parentPath ?? e.path, e.name))] = true;
  assert.deepEqual(Object.keys(committed).sort(), Object.keys(fresh).sort(), `docs/api/ has other files: ${RUN}`);
  for (const [file, text] of Object.entries(fresh))
    assert.equal(readFileSync(join(dir, file), "utf8"), text, `docs/api/${file} is stale: ${RUN}`);
});

/** The quotes of a page: { name: text between its markers }. */
function quotes(text) {
  const out = {};
  for (const m of text.matchAll(/<!-- figures: ([\w-]+) -->\n([\s\S]*?)<!-- \/figures -->/g)) out[m[1]] = m[2];
  return out;
}

test("the pages quote their figures", () => {
  const names = (file) => quotesIn(readFileSync(join(root, file), "utf8"));
  assert.deepEqual(names("README.md"), ["compare", "package"]);
  assert.deepEqual(names("docs/performance.md"), ["peers", "growth", "redis"]);
  assert.deepEqual(names("docs/browser.md"), ["loading"]);
});

test("every quoted figure is the one its data gives", () => {
  const fresh = freshQuotes();
  for (const file of Object.keys(QUOTING)) {
    const now = quotes(readFileSync(join(root, file), "utf8"));
    const want = quotes(fresh[file]);
    for (const [name, text] of Object.entries(want)) {
      if (name === "package") {
        // Every number within 10 % of what npm pack says now.
        const numbers = (t) => [...t.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => Number(m[0].replaceAll(",", "")));
        const [a, b] = [numbers(now[name]), numbers(text)];
        assert.equal(a.length, b.length, `${file}: the package quote changed shape: ${RUN}`);
        for (const [i, x] of a.entries())
          assert.ok(
            Math.abs(x - b[i]) <= 0.1 * Math.max(Math.abs(b[i]), 1),
            `${file}: the package quote says ${x} where npm pack now gives ${b[i]}: ${RUN}`,
          );
      } else {
        assert.equal(now[name], text, `${file}: the "${name}" figures differ from the results: ${RUN}`);
      }
    }
  }
});
