// Schedules as a typed consumer writes them: Scheduler#every and #cron, the Schedule they
// return, and tarry-queue/cron's rules (checked with tsc --strict like main.ts).
import { type OccurrenceRule, type Schedule, Scheduler } from "tarry-queue";
import { type CronRule, cron } from "tarry-queue/cron";
import { RedisDelayQueue } from "tarry-queue/redis";
import { expectType } from "./expect.js";

const scheduler = new Scheduler({ cron });
const every: Schedule = scheduler.every(60_000, (due) => expectType<Date>()(due), {
  catchUp: "one",
  overlap: false,
  start: new Date(),
});
const nightly = scheduler.cron("0 2 * * *", async (due: Date) => void due, {
  timezone: "Europe/Berlin",
  catchUp: "all",
});
expectType<Date | undefined>()(every.nextRun());
expectType<"active" | "paused" | "cancelled" | "ended">()(nightly.state);
expectType<number>()(every.runs + every.skipped);
expectType<Date | undefined>()(every.lastRun);
expectType<boolean>()(every.pause() && every.resume() && nightly.cancel());
expectType<string>()(every.id);

const rule: CronRule = cron("*/5 * * * *", { timezone: "Asia/Kathmandu" });
const asRule: OccurrenceRule = rule;
expectType<number | undefined>()(asRule.next(Date.now()));
expectType<number | undefined>()(rule.latest(Date.now()));

// @ts-expect-error catchUp takes "one", "all" or "none"
scheduler.every(1000, () => {}, { catchUp: "some" });
// @ts-expect-error every() has no timezone
scheduler.every(1000, () => {}, { timezone: "UTC" });
// @ts-expect-error the expression is a string
scheduler.cron(5, () => {});

// A queue whose items are orders and whose schedules carry reports is typed by the union of
// both (a schedule's occurrences are the queue's items), narrowed by a `kind` field.
interface OrderItem {
  kind: "order";
  orderId: number;
}
interface Report {
  kind: "report";
  day?: string;
}
type Work = OrderItem | Report;
const work = new RedisDelayQueue<Work>({ name: "work" });
expectType<Promise<string>>()(work.offer({ kind: "order", orderId: 1 }, 1000));
const report = await work.schedule("nightly", { cron: "0 2 * * *", timezone: "America/New_York" }, { kind: "report" });
expectType<Work>()(report.value);
work.process((value, job) => {
  if (value.kind === "report") expectType<Report>()(value);
  else expectType<number>()(value.orderId);
  expectType<string | undefined>()(job.schedule);
});
// @ts-expect-error a schedule's value is one of the queue's items
work.schedule("invoices", { every: 60_000 }, { kind: "invoice" });
