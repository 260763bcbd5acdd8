// tarry-queue in a Cloudflare Workers project: with `customConditions: ["workerd"]`, as
// wrangler resolves it, the package's types include DurableDelayQueue.
import {
  DelayQueue,
  DurableDelayQueue,
  type DurableDeadLetter,
  type DurableEngine,
  type DurableQueueStats,
  type DurableQueueStorage,
  type DurableScheduleInfo,
  type DurableScheduleOptions,
  type DurableScheduleRule,
  init,
  type ScheduleOptions,
} from "tarry-queue";
import type {
  ScheduleInfo as RedisScheduleInfo,
  RedisScheduleOptions,
  ScheduleRule as RedisScheduleRule,
} from "tarry-queue/redis";
import { expectType } from "./expect.js";

await init();
declare const storage: DurableQueueStorage;

interface Reminder {
  text: string;
}
const durable = await DurableDelayQueue.open<Reminder>(storage, { maxAttempts: 3 });
expectType<DurableDelayQueue<Reminder>>()(durable);
// The engine contract, with this engine's stats and dead letters.
const engine: DurableEngine<Reminder, DurableQueueStats, DurableDeadLetter<Reminder>> = durable;
expectType<Reminder>()((await engine.deadLetters()).items[0].value);
expectType<Promise<string>>()(durable.offer({ text: "call Ada" }, 60_000));
expectType<Promise<string>>()(durable.offer({ text: "call Ada" }, 60_000, { id: "ada", ifExists: "keep" }));
expectType<Promise<string>>()(durable.offerAt({ text: "call Grace" }, new Date(Date.now() + 60_000)));
expectType<Promise<string[]>>()(
  durable.offerMany([
    { value: { text: "a" }, delayMs: 10 },
    { value: { text: "b" }, deadline: new Date(), id: "b", ifExists: "extend" },
  ]),
);
// @ts-expect-error an item has a delay or a deadline, not both
durable.offerMany([{ value: { text: "a" }, delayMs: 10, deadline: 5 }]);
// @ts-expect-error ifExists is one of three
durable.offer({ text: "a" }, 10, { ifExists: "merge" });
expectType<Promise<boolean>>()(durable.cancel("ada"));
expectType<Promise<boolean>>()(durable.reschedule("ada", 10));
expectType<Promise<number | undefined>>()(durable.delayOf("ada"));
expectType<Promise<number>>()(durable.size());
expectType<Reminder | undefined>()(durable.peek());
expectType<number>()((await durable.stats()).dead);
await durable.deliver(
  async (reminder, { id, deadline, attempt }) => {
    expectType<Reminder>()(reminder);
    expectType<string>()(id);
    expectType<number>()(deadline + attempt);
  },
  { retryDelayMs: (attempt) => 1000 * 2 ** attempt },
);
const page = await durable.deadLetters({ limit: 10 });
expectType<Reminder>()(page.items[0].value);
expectType<string>()(page.items[0].reason);
expectType<string | undefined>()(page.next);
expectType<Promise<boolean>>()(durable.retryDead("ada"));
expectType<Promise<boolean>>()(durable.deleteDead("ada"));
expectType<Promise<number>>()(durable.purgeDead({ olderThan: 60_000 }));
await durable.close();
// @ts-expect-error open() is the only way to get one
new DurableDelayQueue();

const q = new DelayQueue<string>();
q.offer("within one request", 10);

// One set of schedule types: each engine's names for them are the same types, so a rule or
// options written for one engine fit the others.
declare const redisRule: RedisScheduleRule;
declare const redisOptions: RedisScheduleOptions;
declare const redisInfo: RedisScheduleInfo<Reminder>;
expectType<DurableScheduleRule>()(redisRule);
expectType<DurableScheduleOptions>()(redisOptions);
expectType<ScheduleOptions>()(redisOptions);
expectType<DurableScheduleInfo<Reminder>>()(redisInfo);
expectType<Promise<DurableScheduleInfo<Reminder>>>()(
  durable.schedule("nightly", { cron: "0 2 * * *", timezone: "Europe/Berlin" }, { text: "b" }, { catchUp: "all" }),
);
// @ts-expect-error a rule is every or cron, not both
durable.schedule("both", { every: 1000, cron: "* * * * *" }, { text: "c" });
