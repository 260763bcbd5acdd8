// Pages that do not use cron do not load croner: the browser entry bundled as a page would
// (esbuild --bundle --minify, tests/schedule/page-weight.mjs), with Scheduler#every and
// without cron, carries none of croner's code; with tarry-queue/cron it does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { measure } from "../schedule/page-weight.mjs";

test("every() brings no cron code into a page; tarry-queue/cron brings croner", () => {
  const { pages } = measure();
  const croner = (code) => code.includes("CronPattern:"); // croner's own messages
  const names = Object.keys(pages);
  for (const name of names.filter((n) => !n.includes("cron"))) assert.equal(croner(pages[name].code), false, name);
  const withCron = names.find((n) => n.includes("cron"));
  assert.equal(croner(pages[withCron].code), true, withCron);
  const base = pages[names[0]].gzip;
  assert.ok(pages[withCron].gzip - base > 8000, "croner is most of what tarry-queue/cron adds");
});

test("docs/schedules.md's page weights are what the pages weigh now, within 3 %", () => {
  const { pages } = measure();
  const doc = readFileSync(new URL("../../docs/schedules.md", import.meta.url), "utf8");
  const rows = [
    ["DelayQueue", "| `DelayQueue` |"],
    ["DelayQueue + Scheduler#every", "| and `Scheduler` (`schedule` or `every`) |"],
    ["DelayQueue + Scheduler#cron (tarry-queue/cron)", "| and `Scheduler#cron` (`tarry-queue/cron`) |"],
  ];
  for (const [page, start] of rows) {
    const line = doc.split("\n").find((l) => l.startsWith(start));
    assert.ok(line, `docs/schedules.md has the row ${start}`);
    const [minified, gzipped] = [...line.matchAll(/([\d.]+) kB/g)].map((m) => Number(m[1]) * 1000);
    const { code, gzip } = pages[page];
    const near = (said, is) => Math.abs(said - is) <= 0.03 * is;
    const now = `${(code.length / 1000).toFixed(1)} kB | ${(gzip / 1000).toFixed(1)} kB`;
    assert.ok(
      near(minified, code.length) && near(gzipped, gzip),
      `${start} should say ${now} (node tests/schedule/page-weight.mjs)`,
    );
  }
});
