// The one bad-input table (tests/bad-input.mjs) in headless Chromium, with the browser entry
// (js/web.js) after init(). Node, Deno and workerd run the same table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sharedBrowser } from "../../tools/chromium.mjs";

const browser = sharedBrowser();

test("bad input everywhere: each call throws a clear error naming the argument and changes nothing", async () => {
  const page = await browser.open("/tests/browser/pages/blank.html");
  const r = await page.evaluate(async () => {
    const { DelayQueue, Scheduler, init } = await import("/js/web.js");
    await init();
    const { report, sweep } = await import("/tests/bad-input.mjs");
    const result = await sweep({ DelayQueue, Scheduler, init });
    return { ran: result.ran, failed: result.failures.length, methods: result.methods.length, report: report(result) };
  });
  console.log(`bad input (Chromium): ${r.ran} calls over ${r.methods} methods`);
  assert.equal(r.failed, 0, r.report);
  assert.ok(r.ran > 400, `only ${r.ran} rows`);
});
