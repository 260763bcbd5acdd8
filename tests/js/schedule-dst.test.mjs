// Cron at daylight-saving changes: the exact instants, written out by hand from the zone
// rules (not computed by the library under test), for daily and hourly expressions across
// both changes of 2026 and 2027. The rule (Vixie cron's): an expression whose minute and
// hour fields each name one value runs once a day, at the first instant after a
// spring-forward gap that skips its time and at the first of the two instants of a
// fall-back that repeats it; one with a wildcard, range, step or list there follows the
// wall clock, skipping times that do not exist and running repeated times twice.
//
// The zones' rules, as the instants below use them:
// - America/New_York: EST (−5) / EDT (−4). Forward on the second Sunday of March at 02:00
//   EST (07:00Z) to 03:00; back on the first Sunday of November at 02:00 EDT (06:00Z) to
//   01:00, so 01:00–01:59 comes twice (05:xxZ, then 06:xxZ). 2026: Mar 8, Nov 1; 2027:
//   Mar 14, Nov 7.
// - Europe/Berlin: CET (+1) / CEST (+2). Forward on the last Sunday of March at 01:00Z
//   (02:00 → 03:00); back on the last Sunday of October at 01:00Z (03:00 → 02:00), so
//   02:00–02:59 comes twice (00:xxZ, then 01:xxZ). 2026: Mar 29, Oct 25; 2027: Mar 28, Oct 31.
// - Australia/Lord_Howe: +10:30 / +11 (a 30-minute shift). Back on the first Sunday of
//   April at 02:00 (+11, 15:00Z the day before) to 01:30, so 01:30–01:59 comes twice;
//   forward on the first Sunday of October at 02:00 (+10:30, 15:30Z the day before) to
//   02:30, so 02:00–02:29 does not exist. 2026: Apr 5, Oct 4; 2027: Apr 4, Oct 3.
// - Asia/Kathmandu: +05:45 all year (no change since 1986).
// - UTC: no change.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Scheduler } from "tarry-queue";
import { cron } from "tarry-queue/cron";
import { FakeHost } from "../fuzz/host.mjs";

/** [zone, expression, after (exclusive), the occurrences that follow, in UTC]. */
const TABLE = [
  // America/New_York, 2026
  [
    "America/New_York",
    "30 2 * * *",
    "2026-03-07T00:00Z",
    ["2026-03-07T07:30Z", "2026-03-08T07:00Z", "2026-03-09T06:30Z"],
  ], // 02:30 EST, gap → 03:00 EDT, 02:30 EDT
  [
    "America/New_York",
    "0 2 * * *",
    "2026-03-07T00:00Z",
    ["2026-03-07T07:00Z", "2026-03-08T07:00Z", "2026-03-09T06:00Z"],
  ], // 02:00 itself is skipped → 03:00 EDT
  [
    "America/New_York",
    "30 1 * * *",
    "2026-03-07T00:00Z",
    ["2026-03-07T06:30Z", "2026-03-08T06:30Z", "2026-03-09T05:30Z"],
  ], // before the gap: unaffected
  [
    "America/New_York",
    "30 * * * *",
    "2026-03-08T05:00Z",
    ["2026-03-08T05:30Z", "2026-03-08T06:30Z", "2026-03-08T07:30Z", "2026-03-08T08:30Z"],
  ], // 00:30, 01:30 EST, (02:30 skipped), 03:30, 04:30 EDT
  [
    "America/New_York",
    "0,30 2 * * *",
    "2026-03-07T00:00Z",
    ["2026-03-07T07:00Z", "2026-03-07T07:30Z", "2026-03-09T06:00Z", "2026-03-09T06:30Z"],
  ], // a list: skipped on the 8th
  [
    "America/New_York",
    "30 1 * * *",
    "2026-10-31T00:00Z",
    ["2026-10-31T05:30Z", "2026-11-01T05:30Z", "2026-11-02T06:30Z"],
  ], // 01:30 EDT, the first 01:30 only, 01:30 EST
  [
    "America/New_York",
    "30 2 * * *",
    "2026-10-31T00:00Z",
    ["2026-10-31T06:30Z", "2026-11-01T07:30Z", "2026-11-02T07:30Z"],
  ], // 02:30 comes once on the 1st (EST)
  [
    "America/New_York",
    "30 * * * *",
    "2026-11-01T04:00Z",
    ["2026-11-01T04:30Z", "2026-11-01T05:30Z", "2026-11-01T06:30Z", "2026-11-01T07:30Z"],
  ], // 00:30, 01:30 EDT, 01:30 EST, 02:30 EST
  [
    "America/New_York",
    "*/20 1 * * *",
    "2026-11-01T04:00Z",
    [
      "2026-11-01T05:00Z",
      "2026-11-01T05:20Z",
      "2026-11-01T05:40Z",
      "2026-11-01T06:00Z",
      "2026-11-01T06:20Z",
      "2026-11-01T06:40Z",
      "2026-11-02T06:00Z",
    ],
  ], // a step: both passes
  // America/New_York, 2027
  [
    "America/New_York",
    "30 2 * * *",
    "2027-03-13T00:00Z",
    ["2027-03-13T07:30Z", "2027-03-14T07:00Z", "2027-03-15T06:30Z"],
  ],
  [
    "America/New_York",
    "30 * * * *",
    "2027-03-14T05:00Z",
    ["2027-03-14T05:30Z", "2027-03-14T06:30Z", "2027-03-14T07:30Z", "2027-03-14T08:30Z"],
  ],
  [
    "America/New_York",
    "30 1 * * *",
    "2027-11-06T00:00Z",
    ["2027-11-06T05:30Z", "2027-11-07T05:30Z", "2027-11-08T06:30Z"],
  ],
  [
    "America/New_York",
    "30 * * * *",
    "2027-11-07T04:00Z",
    ["2027-11-07T04:30Z", "2027-11-07T05:30Z", "2027-11-07T06:30Z", "2027-11-07T07:30Z"],
  ],
  // Europe/Berlin, 2026
  ["Europe/Berlin", "30 2 * * *", "2026-03-28T00:00Z", ["2026-03-28T01:30Z", "2026-03-29T01:00Z", "2026-03-30T00:30Z"]], // 02:30 CET, gap → 03:00 CEST, 02:30 CEST
  ["Europe/Berlin", "30 * * * *", "2026-03-29T00:00Z", ["2026-03-29T00:30Z", "2026-03-29T01:30Z", "2026-03-29T02:30Z"]], // 01:30 CET, (02:30 skipped), 03:30, 04:30 CEST
  ["Europe/Berlin", "30 2 * * *", "2026-10-24T00:00Z", ["2026-10-24T00:30Z", "2026-10-25T00:30Z", "2026-10-26T01:30Z"]], // the first 02:30 (CEST) only
  [
    "Europe/Berlin",
    "30 * * * *",
    "2026-10-24T23:00Z",
    ["2026-10-24T23:30Z", "2026-10-25T00:30Z", "2026-10-25T01:30Z", "2026-10-25T02:30Z"],
  ], // 01:30, 02:30 CEST, 02:30 CET, 03:30 CET
  ["Europe/Berlin", "0 9 * * 1-5", "2026-03-27T00:00Z", ["2026-03-27T08:00Z", "2026-03-30T07:00Z"]], // Friday 09:00 CET, Monday 09:00 CEST
  // Europe/Berlin, 2027
  ["Europe/Berlin", "30 2 * * *", "2027-03-27T00:00Z", ["2027-03-27T01:30Z", "2027-03-28T01:00Z", "2027-03-29T00:30Z"]],
  ["Europe/Berlin", "30 * * * *", "2027-03-28T00:00Z", ["2027-03-28T00:30Z", "2027-03-28T01:30Z", "2027-03-28T02:30Z"]],
  ["Europe/Berlin", "30 2 * * *", "2027-10-30T00:00Z", ["2027-10-30T00:30Z", "2027-10-31T00:30Z", "2027-11-01T01:30Z"]],
  [
    "Europe/Berlin",
    "30 * * * *",
    "2027-10-30T23:00Z",
    ["2027-10-30T23:30Z", "2027-10-31T00:30Z", "2027-10-31T01:30Z", "2027-10-31T02:30Z"],
  ],
  // Australia/Lord_Howe, 2026: back on Apr 5 (15:00Z Apr 4), forward on Oct 4 (15:30Z Oct 3)
  [
    "Australia/Lord_Howe",
    "45 1 * * *",
    "2026-04-03T00:00Z",
    ["2026-04-03T14:45Z", "2026-04-04T14:45Z", "2026-04-05T15:15Z"],
  ], // 01:45 +11, the first 01:45 only, 01:45 +10:30
  [
    "Australia/Lord_Howe",
    "45 * * * *",
    "2026-04-04T13:00Z",
    ["2026-04-04T13:45Z", "2026-04-04T14:45Z", "2026-04-04T15:15Z", "2026-04-04T16:15Z"],
  ], // 00:45, 01:45 +11, 01:45, 02:45 +10:30
  [
    "Australia/Lord_Howe",
    "0 * * * *",
    "2026-04-04T13:30Z",
    ["2026-04-04T14:00Z", "2026-04-04T15:30Z", "2026-04-04T16:30Z"],
  ], // 01:00 +11, then 02:00 +10:30: 90 minutes apart
  [
    "Australia/Lord_Howe",
    "15 2 * * *",
    "2026-10-02T00:00Z",
    ["2026-10-02T15:45Z", "2026-10-03T15:30Z", "2026-10-04T15:15Z"],
  ], // 02:15 +10:30, gap → 02:30 +11, 02:15 +11
  ["Australia/Lord_Howe", "15 * * * *", "2026-10-03T14:00Z", ["2026-10-03T14:45Z", "2026-10-03T16:15Z"]], // 01:15 +10:30, (02:15 skipped), 03:15 +11
  [
    "Australia/Lord_Howe",
    "45 * * * *",
    "2026-10-03T14:00Z",
    ["2026-10-03T14:15Z", "2026-10-03T15:15Z", "2026-10-03T15:45Z", "2026-10-03T16:45Z"],
  ], // 00:45, 01:45 +10:30, 02:45 +11 (after the gap: 30 minutes later), 03:45
  // Australia/Lord_Howe, 2027: back on Apr 4 (15:00Z Apr 3), forward on Oct 3 (15:30Z Oct 2)
  [
    "Australia/Lord_Howe",
    "45 1 * * *",
    "2027-04-02T00:00Z",
    ["2027-04-02T14:45Z", "2027-04-03T14:45Z", "2027-04-04T15:15Z"],
  ],
  [
    "Australia/Lord_Howe",
    "45 * * * *",
    "2027-04-03T13:00Z",
    ["2027-04-03T13:45Z", "2027-04-03T14:45Z", "2027-04-03T15:15Z", "2027-04-03T16:15Z"],
  ],
  [
    "Australia/Lord_Howe",
    "15 2 * * *",
    "2027-10-01T00:00Z",
    ["2027-10-01T15:45Z", "2027-10-02T15:30Z", "2027-10-03T15:15Z"],
  ],
  ["Australia/Lord_Howe", "15 * * * *", "2027-10-02T14:00Z", ["2027-10-02T14:45Z", "2027-10-02T16:15Z"]],
  // Asia/Kathmandu: +05:45 through the dates other zones change on
  ["Asia/Kathmandu", "0 9 * * *", "2026-03-07T00:00Z", ["2026-03-07T03:15Z", "2026-03-08T03:15Z", "2026-03-09T03:15Z"]],
  ["Asia/Kathmandu", "0 * * * *", "2026-10-25T00:00Z", ["2026-10-25T00:15Z", "2026-10-25T01:15Z", "2026-10-25T02:15Z"]],
  ["Asia/Kathmandu", "30 2 * * *", "2027-03-27T00:00Z", ["2027-03-27T20:45Z", "2027-03-28T20:45Z"]], // 02:30 +05:45 is 20:45Z the day before
  ["Asia/Kathmandu", "0 * * * *", "2027-11-06T23:00Z", ["2027-11-06T23:15Z", "2027-11-07T00:15Z"]],
  // UTC
  ["UTC", "30 2 * * *", "2026-03-28T00:00Z", ["2026-03-28T02:30Z", "2026-03-29T02:30Z", "2026-03-30T02:30Z"]],
  ["UTC", "30 * * * *", "2026-11-01T00:00Z", ["2026-11-01T00:30Z", "2026-11-01T01:30Z", "2026-11-01T02:30Z"]],
  ["UTC", "30 1 * * *", "2027-11-06T00:00Z", ["2027-11-06T01:30Z", "2027-11-07T01:30Z"]],
  ["UTC", "0 * * * *", "2027-03-14T05:30Z", ["2027-03-14T06:00Z", "2027-03-14T07:00Z"]],
];

const ms = (iso) => Date.parse(iso);

test("cron at DST changes: the hand-written instants, for each zone, expression and change", () => {
  for (const [zone, expression, after, expected] of TABLE) {
    const rule = cron(expression, { timezone: zone });
    const got = [];
    let t = ms(after);
    for (let i = 0; i < expected.length; i++) {
      t = rule.next(t);
      got.push(new Date(t).toISOString().replace(":00.000Z", "Z"));
    }
    assert.deepEqual(got, expected, `${expression} in ${zone} after ${after}`);
    // latest() agrees: the last occurrence at or before each one is itself, and just
    // before it, the one before.
    for (let i = 0; i < expected.length; i++) {
      assert.equal(rule.latest(ms(expected[i])), ms(expected[i]), `latest at ${expected[i]}`);
      if (i > 0) assert.equal(rule.latest(ms(expected[i]) - 1), ms(expected[i - 1]), `latest before ${expected[i]}`);
    }
  }
});

test("a Scheduler on a fake clock runs the table's New York and Lord Howe instants, each once, never early", () => {
  // The whole path: the wall-clock due times converted to the scheduler's clock, the one
  // timer, the wake-up that checks Date.now().
  const runs = [
    ["America/New_York", "30 2 * * *", "2026-03-07T00:00Z", 3],
    ["America/New_York", "30 * * * *", "2026-11-01T04:00Z", 4],
    ["America/New_York", "30 1 * * *", "2027-11-06T00:00Z", 3],
    ["Australia/Lord_Howe", "15 2 * * *", "2026-10-02T00:00Z", 3],
    ["Australia/Lord_Howe", "45 * * * *", "2027-04-03T13:00Z", 4],
  ];
  for (const [zone, expression, after, n] of runs) {
    const expected = TABLE.find((r) => r[0] === zone && r[1] === expression && r[2] === after)[3].slice(0, n);
    const host = new FakeHost({ start: 1000, wallBase: ms(after) - 1000 });
    host.install();
    try {
      const s = new Scheduler({ cron, clock: host.clock });
      const seen = [];
      s.cron(expression, (due) => seen.push([due.toISOString().replace(":00.000Z", "Z"), Date.now() - due.getTime()]), {
        timezone: zone,
      });
      // Move the fake clock a minute at a time, firing the one timer when it is due.
      const end = ms(expected.at(-1)) + 60_000;
      while (Date.now() < end) {
        host.now += 60_000;
        for (const t of host.due()) host.fire(t);
        assert.ok(host.live.size <= 1, "at most one host timer armed");
      }
      assert.deepEqual(
        seen.map((x) => x[0]),
        expected,
        `${expression} in ${zone}`,
      );
      for (const [due, late] of seen) assert.ok(late >= 0 && late < 60_000, `${due} ran ${late} ms after it was due`);
      assert.deepEqual(host.problems, []);
      s.close();
    } finally {
      host.uninstall();
    }
  }
});
