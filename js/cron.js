// tarry-queue/cron: cron rules for the Scheduler (and the engines past one process), in an
// entry of its own because they bring croner (about 10 kB of gzipped JS) that pages
// without cron should not load:
//
//   import { Scheduler } from "tarry-queue";
//   import { cron } from "tarry-queue/cron";
//   const scheduler = new Scheduler({ cron });
//   scheduler.cron("0 9 * * 1-5", (due) => report(due), { timezone: "Europe/Berlin" });
//
// `cron(expression, { timezone })` is also a rule of its own: `next(after)` and
// `latest(at)` give occurrences as epoch ms, from the rule alone (schedule/cron.js).
export { CronRule, cron } from "./schedule/cron.js";
