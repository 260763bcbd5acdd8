// The one bad-input table (tests/bad-input.mjs) in workerd (through miniflare), with the
// package's `workerd` entry as Workers load it. Node, Deno and Chromium run the same table;
// DurableDelayQueue's bad arguments are cases of the engine contract (tests/contract, which
// runs them in workerd too). Run with a Node miniflare supports (>= 22; scripts/test.sh uses
// Node 24).
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { packageModules, root } from "./modules.mjs";

const worker = `
import { DelayQueue, Scheduler, init } from "./js/workerd.js";
import { report, sweep } from "./tests/bad-input.mjs";

export default {
  async fetch() {
    const result = await sweep({ DelayQueue, Scheduler, init });
    return Response.json({ ran: result.ran, failed: result.failures.length, methods: result.methods.length, report: report(result) });
  },
};
`;

function modules() {
  const mods = [{ type: "ESModule", path: join(root, "sweep-worker.js"), contents: worker }, ...packageModules()];
  mods.push({ type: "ESModule", path: join(root, "tests/bad-input.mjs") });
  return mods;
}

test("bad input everywhere: each call throws a clear error naming the argument and changes nothing", async () => {
  const mf = new Miniflare({
    modulesRoot: root,
    modules: modules(),
    compatibilityDate: "2025-09-01",
  });
  try {
    const res = await mf.dispatchFetch("http://tarry.test/");
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const r = JSON.parse(text);
    console.log(`bad input (workerd): ${r.ran} calls over ${r.methods} methods`);
    assert.equal(r.failed, 0, r.report);
    assert.ok(r.ran > 400, `only ${r.ran} rows`);
  } finally {
    await mf.dispose();
  }
});
