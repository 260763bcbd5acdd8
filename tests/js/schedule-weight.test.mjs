// Pages that do not use cron do not load croner: the browser entry bundled as a page would
// (esbuild --bundle --minify, tests/schedule/page-weight.mjs), with Scheduler#every and
// without cron, carries none of croner's code; with tarry-queue/cron it does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { measure } from "../schedule/page-weight.mjs";

test("every() brings no cron code into a page; tarry-queue/cron brings croner", () => {
  const { pages } = measure();
  const croner = (code) => code.includes("CronPattern:"); // croner's own messages
  const names = Object.keys(pages);
  for (const name of names.filter((n) => !n.includes("cron"))) assert.equal(croner(pages[name].code), false, name);
  const withCron = names.find((n) => n.includes("cron"));
  assert.equal(croner(pages[withCron].code), true, withCron);
  const base = pages[names[0]].gzip;
  // What the figures in docs/schedules.md say, within a margin for small code changes.
  assert.ok(pages[withCron].gzip - base > 8000, "croner is most of what tarry-queue/cron adds");
});
