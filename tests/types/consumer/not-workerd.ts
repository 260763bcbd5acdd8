// Everywhere but workerd, DurableDelayQueue is not exported, so the types refuse it.
// @ts-expect-error the browser, Node and Deno entries have no DurableDelayQueue
import { DurableDelayQueue } from "tarry-queue";

void DurableDelayQueue;
