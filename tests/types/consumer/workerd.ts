// tarry-queue in a Cloudflare Workers project: with `customConditions: ["workerd"]`, as
// wrangler resolves it, the package's types include DurableDelayQueue.
import { DelayQueue, DurableDelayQueue, type DurableQueueStorage, init } from "tarry-queue";
import { expectType } from "./expect.js";

await init();
declare const storage: DurableQueueStorage;

interface Reminder {
  text: string;
}
const durable = await DurableDelayQueue.open<Reminder>(storage);
expectType<DurableDelayQueue<Reminder>>()(durable);
expectType<Promise<number>>()(durable.offer({ text: "call Ada" }, 60_000));
expectType<Promise<number>>()(durable.offerAt({ text: "call Grace" }, new Date(Date.now() + 60_000)));
expectType<Promise<Reminder | undefined>>()(durable.cancel(1));
expectType<Reminder | undefined>()(durable.peek());
await durable.deliver(async (reminder, { id, deadline }) => {
  expectType<Reminder>()(reminder);
  expectType<number>()(id + deadline);
});
// @ts-expect-error open() is the only way to get one
new DurableDelayQueue();

const q = new DelayQueue<string>();
q.offer("within one request", 10);
