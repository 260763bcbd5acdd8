// What DurableDelayQueue's Node tests share: the queue with its wasm initialised, a clock the
// test moves by hand, and the checks that memory agrees with storage.
//
// DurableDelayQueue is exported by the `workerd` entry only (Workers import the wasm as a
// module, which Node cannot), so these tests load the Node entry, which initialises the same
// wasm module, and import js/durable/queue.js beside it. tests/workerd runs it as a user imports it.
import assert from "node:assert/strict";
import "../../js/node.js";
import { DurableDelayQueue } from "../../js/durable/queue.js";
import { FakeStorage } from "../../tools/durable-storage.mjs";

export { DurableDelayQueue, FakeStorage };

/** 2030-01-01: a plausible epoch time, far from the alarm API's bounds. */
export const T0 = Date.UTC(2030, 0, 1);

/** Date.now() under the test's control for the rest of test `t`. */
export function manualClock(t, start = T0) {
  const clock = {
    now: start,
    advance(ms) {
      clock.now += ms;
    },
  };
  t.mock.method(Date, "now", () => clock.now);
  return clock;
}

/** A queue read back from a copy of `storage`, as a restarted object would read it. */
export function reopen(storage, opts) {
  return DurableDelayQueue.open(storage.clone(), opts);
}

/** The values in the queue, head first. */
export function values(queue) {
  return queue.toArray().map((i) => i.value);
}

/** Memory agrees with storage: a queue read back from storage holds the same items, dead letters and schedules, in order. */
export async function assertAgrees(queue, storage, message = "") {
  const back = await reopen(storage);
  assert.deepEqual(back.toArray(), queue.toArray(), `memory and storage disagree ${message}`);
  assert.deepEqual(await dead(back), await dead(queue), `memory and storage disagree on dead letters ${message}`);
  assert.deepEqual(
    await back.schedules(),
    await queue.schedules(),
    `memory and storage disagree on schedules ${message}`,
  );
}

/** Every dead letter, in order of death. */
export async function dead(queue) {
  return (await queue.deadLetters({ limit: 1000 })).items;
}

/** The epoch-ms deadline of the pending item `id`, or undefined. */
export function deadlineOf(queue, id) {
  return queue.toArray().find((i) => i.id === id)?.deadline;
}

/** The earliest time an alarm for `deadline` may be set for, and still not be late. */
export function alarmFor(deadline) {
  return Math.max(1, Math.ceil(deadline));
}

/** Items pending ⇒ the alarm is set, no later than the head's deadline (early is allowed). */
export function assertAlarmNotLate(queue, storage, message = "") {
  const head = queue.toArray()[0];
  if (head === undefined) return;
  assert.notEqual(storage.alarm, null, `items pending but no alarm ${message}`);
  assert.ok(
    storage.alarm <= alarmFor(head.deadline),
    `alarm at ${storage.alarm} is after the head's deadline ${head.deadline} ${message}`,
  );
}

/** The alarm is exactly the head's (none when empty): what every successful call leaves. */
export function assertAlarmExact(queue, storage, message = "") {
  const head = queue.toArray()[0];
  assert.equal(storage.alarm, head === undefined ? null : alarmFor(head.deadline), `alarm ${message}`);
}
