// The engine contract (cases.mjs) against DurableDelayQueue in the real workerd runtime,
// through miniflare: each case runs inside a Durable Object of its own (worker.mjs), with the
// package's `workerd` entry as Workers load it and the object's real storage and alarm.
// Run with a Node miniflare supports (>= 22; scripts/test.sh uses the node24 devDependency).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { packageModules, root } from "../workerd/modules.mjs";
import { cases } from "./cases.mjs";

function modules() {
  // croner: js/schedule/cron.js imports it (cron schedules load it on first use).
  const mods = [
    { type: "ESModule", path: join(root, "tests/contract/worker.mjs") },
    ...packageModules({ croner: true }),
  ];
  for (const f of ["cases.mjs", "schedule-cases.mjs", "durable-engine.mjs"])
    mods.push({ type: "ESModule", path: join(root, "tests/contract", f) });
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
