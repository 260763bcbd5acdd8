// tarry-queue/cron in workerd (through miniflare): a time zone goes through workerd's Intl,
// and a Scheduler runs a cron schedule inside one request. workerd resolves a bare
// specifier next to the module that imports it, so croner is handed over as the module
// that js/schedule/cron.js's `import "croner"` names, as a bundler (wrangler) would have
// resolved it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { packageModules, root } from "./modules.mjs";

const worker = `
import { Scheduler } from "./js/workerd.js";
import { cron } from "./js/cron.js";
export default {
  async fetch() {
    const iso = (t) => new Date(t).toISOString();
    const rule = cron("30 2 * * *", { timezone: "America/New_York" });
    const gap = iso(rule.next(Date.parse("2026-03-08T00:00Z"))); // 02:30 does not exist: 03:00 EDT
    const berlin = iso(cron("30 2 * * *", { timezone: "Europe/Berlin" }).next(Date.parse("2026-10-25T00:00Z")));
    const scheduler = new Scheduler({ cron });
    const ran = await new Promise((resolve) => {
      const s = scheduler.cron("* * * * * *", (due) => {
        s.cancel();
        resolve({ due: due.getTime(), at: Date.now() });
      }, { timezone: "Asia/Kathmandu" });
    });
    scheduler.close();
    return Response.json({ gap, berlin, ran });
  },
};`;

function modules() {
  const mods = [{ type: "ESModule", path: join(root, "cron-worker.js"), contents: worker }];
  mods.push(...packageModules({ croner: true }));
  return mods;
}

test("cron with a time zone in workerd: the DST instants, and a schedule that runs in a request", async () => {
  const mf = new Miniflare({ modulesRoot: root, modules: modules(), compatibilityDate: "2025-09-01" });
  try {
    const res = await mf.dispatchFetch("http://tarry.test/");
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const r = JSON.parse(text);
    assert.equal(r.gap, "2026-03-08T07:00:00.000Z");
    assert.equal(r.berlin, "2026-10-25T00:30:00.000Z"); // the first of the two 02:30s (CEST)
    assert.ok(r.ran.at >= r.ran.due, `ran ${r.ran.due - r.ran.at} ms early`);
    assert.equal(r.ran.due % 1000, 0);
  } finally {
    await mf.dispose();
  }
});
