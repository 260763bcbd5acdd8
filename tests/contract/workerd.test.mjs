// The engine contract (cases.mjs) against DurableDelayQueue in the real workerd runtime,
// through miniflare: each case runs inside a Durable Object of its own (worker.mjs), with the
// package's `workerd` entry as Workers load it and the object's real storage and alarm.
// Run with a Node miniflare supports (>= 22; scripts/test.sh uses the node24 devDependency).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { cases } from "./cases.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

function modules() {
  const mods = [{ type: "ESModule", path: join(root, "tests/contract/worker.mjs") }];
  for (const dir of ["js", "dist"]) {
    for (const e of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const f = relative(root, join(e.parentPath ?? e.path, e.name));
      if (f.endsWith(".js")) mods.push({ type: "ESModule", path: join(root, f) });
      else if (f.endsWith(".wasm")) mods.push({ type: "CompiledWasm", path: join(root, f) });
    }
  }
  for (const f of ["cases.mjs", "schedule-cases.mjs", "durable-engine.mjs"])
    mods.push({ type: "ESModule", path: join(root, "tests/contract", f) });
  // js/schedule/cron.js imports "croner": workerd resolves it next to the importer, as a
  // bundler would have resolved it (cron schedules load it on first use).
  const croner = readFileSync(join(root, "node_modules/croner/dist/croner.js"), "utf8");
  mods.push({ type: "ESModule", path: join(root, "js/schedule/croner"), contents: croner });
  return mods;
}

let mf;
before(async () => {
  mf = new Miniflare({
    modulesRoot: root,
    modules: modules(),
    compatibilityDate: "2025-09-01",
    compatibilityFlags: ["nodejs_compat"], // node:assert, which the cases use
    durableObjects: { CASES: { className: "ContractCase", useSQLite: true } },
  });
  await mf.ready;
});
after(() => mf?.dispose());

for (const c of cases) {
  test(c.name, async () => {
    const res = await mf.dispatchFetch(`http://contract.test/?case=${encodeURIComponent(c.name)}`);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const result = JSON.parse(text);
    if (!result.ok) assert.fail(result.error);
  });
}
