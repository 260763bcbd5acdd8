// Schedules in headless Chromium: cron with a time zone goes through the browser's Intl; the
// rule gives the hand-written instants at DST changes, and a Scheduler runs every and cron
// schedules on the page's timers, never early by Date.now().
import { test } from "node:test";
import assert from "node:assert/strict";
import { sharedBrowser } from "../../tools/chromium.mjs";

const browser = sharedBrowser();

test("cron with a time zone in Chromium: DST instants, and every and cron schedules on real timers", async () => {
  const page = await browser.open("/tests/browser/pages/cron.html");
  try {
    const r = await page.evaluate(`(async () => {
      const { Scheduler, init } = await import("/js/web.js");
      const { cron } = await import("/js/cron.js");
      await init();
      const iso = (t) => new Date(t).toISOString();
      const chain = (rule, from, n) => {
        const out = [];
        for (let t = Date.parse(from), i = 0; i < n; i++) out.push(iso((t = rule.next(t))));
        return out;
      };
      const instants = {
        berlin: chain(cron("30 2 * * *", { timezone: "Europe/Berlin" }), "2026-03-28T00:00Z", 3),
        newYork: chain(cron("30 * * * *", { timezone: "America/New_York" }), "2026-11-01T04:00Z", 4),
        lordHowe: chain(cron("15 2 * * *", { timezone: "Australia/Lord_Howe" }), "2026-10-02T00:00Z", 3),
        kathmandu: chain(cron("0 9 * * *", { timezone: "Asia/Kathmandu" }), "2026-06-01T00:00Z", 1),
      };
      const scheduler = new Scheduler({ cron });
      const late = [];
      const a = scheduler.every(30, (due) => late.push(Date.now() - due.getTime()));
      const b = scheduler.cron("* * * * * *", (due) => late.push(Date.now() - due.getTime()), { timezone: "Asia/Kathmandu" });
      await new Promise((r) => setTimeout(r, 1300));
      const runs = { every: a.runs, cron: b.runs, timers: scheduler.stats.timersArmed };
      scheduler.close();
      return { instants, late, runs };
    })()`);
    assert.deepEqual(r.instants, {
      // 02:30 CET; 29 March: 02:30 does not exist → 03:00 CEST (01:00Z); 02:30 CEST
      berlin: ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"],
      // 00:30 EDT, 01:30 EDT, 01:30 EST (the repeated hour runs twice), 02:30 EST
      newYork: [
        "2026-11-01T04:30:00.000Z",
        "2026-11-01T05:30:00.000Z",
        "2026-11-01T06:30:00.000Z",
        "2026-11-01T07:30:00.000Z",
      ],
      // 02:15 +10:30; 4 October: 02:00-02:29 does not exist → 02:30 +11 (15:30Z); 02:15 +11
      lordHowe: ["2026-10-02T15:45:00.000Z", "2026-10-03T15:30:00.000Z", "2026-10-04T15:15:00.000Z"],
      kathmandu: ["2026-06-01T03:15:00.000Z"], // 09:00 +05:45
    });
    assert.ok(r.runs.every >= 10, `every(30) ran ${r.runs.every} times`);
    assert.ok(r.runs.cron >= 1, `the per-second cron ran ${r.runs.cron} times`);
    assert.equal(r.runs.timers, 1);
    for (const ms of r.late) {
      assert.ok(ms >= 0, `ran ${-ms} ms early`);
      assert.ok(ms < 2000, `ran ${ms} ms late`);
    }
  } finally {
    await page.close();
  }
});
