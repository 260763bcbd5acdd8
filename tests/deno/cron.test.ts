// Schedules under Deno: cron with a time zone goes through Intl, which Deno has; the rule
// gives the hand-written instants at a DST change, and a Scheduler runs every and cron
// schedules on real timers, never early. Deno's sanitizers fail a test that leaves a timer.
import { assert, assertEquals, assertThrows } from "./assert.ts";
import { Scheduler } from "tarry-queue";
import { cron } from "tarry-queue/cron";

Deno.test("tarry-queue/cron resolves to its entry and reads time zones through Intl", () => {
  assertEquals(import.meta.resolve("tarry-queue/cron"), new URL("../../js/cron.js", import.meta.url).href);
  const iso = (t: number | undefined) => new Date(t as number).toISOString();
  // New York springs forward on 8 March 2026 at 07:00Z: 02:30 does not exist, and a
  // fixed-time job runs at 03:00 EDT instead.
  const ny = cron("30 2 * * *", { timezone: "America/New_York" });
  assertEquals(iso(ny.next(Date.parse("2026-03-08T00:00Z"))), "2026-03-08T07:00:00.000Z");
  // Lord Howe falls back half an hour on 5 April 2026 (15:00Z the day before): 01:45 comes twice.
  const lh = cron("45 * * * *", { timezone: "Australia/Lord_Howe" });
  let t = Date.parse("2026-04-04T14:00Z");
  const got = [];
  for (let i = 0; i < 3; i++) got.push(iso((t = lh.next(t) as number)));
  assertEquals(got, ["2026-04-04T14:45:00.000Z", "2026-04-04T15:15:00.000Z", "2026-04-04T16:15:00.000Z"]);
  assertEquals(
    iso(cron("0 9 * * *", { timezone: "Asia/Kathmandu" }).next(Date.parse("2026-06-01T00:00Z"))),
    "2026-06-01T03:15:00.000Z",
  );
  assertThrows(() => cron("0 9 * * *", { timezone: "Nowhere/Place" }), RangeError, /timezone/);
});

Deno.test("a Scheduler runs every and cron schedules on real timers, never early", async () => {
  const scheduler = new Scheduler({ cron });
  const late: number[] = [];
  const a = scheduler.every(30, (due) => late.push(Date.now() - due.getTime()));
  const b = scheduler.cron("* * * * * *", (due) => late.push(Date.now() - due.getTime()), {
    timezone: "Europe/Berlin",
  });
  await new Promise((r) => setTimeout(r, 1200));
  assert(b.runs >= 1, `the per-second cron ran ${b.runs} times`);
  assert(a.runs >= 10, `every(30) ran ${a.runs} times`);
  for (const ms of late) assert(ms >= 0 && ms < 2000, `ran ${ms} ms after its due time`);
  a.cancel();
  b.cancel();
  assertEquals(scheduler.stats.timersArmed, 0);
  scheduler.close();
});
