// A DurableDelayQueue's schedules (docs/schedules.md): schedule() stores a schedule and its
// pending occurrence in one transaction, unschedule() removes both, schedules() lists them.
// What a schedule computes (its rule, its next occurrence, catchUp) is js/schedule/durable.js.

import { infoOf as scheduleInfoOf, pendingId, planSchedule } from "../schedule/durable.js";
import { checkScheduleId, cronRuleOf, occurrenceId, scheduleSpec } from "../schedule/spec.js";
import { storable } from "./producer.js";

/** @typedef {import("./store.js").DurableRecord} DurableRecord */
/** @typedef {import("./store.js").Change} Change */

/**
 * Creates the schedule `id`, or updates it: `{ every }` (ms, a fixed rate) or `{ cron,
 * timezone }`, each occurrence an item with `value`, delivered like any other (`job.schedule`
 * = `id`, `job.deadline` = its due time). Options: `catchUp` ("one", "all", "none"),
 * `overlap`, `start`. The chain goes on when the rule is the same; the schedule and its
 * pending occurrence are stored in one transaction. Resolves with the schedule, as
 * schedules() lists it.
 */
export async function schedule(store, id, rule, value, opts) {
  const spec = scheduleSpec(id, rule, opts);
  const copy = storable(value, "value");
  const cronRule =
    spec.kind === "cron" ? await cronRuleOf(/** @type {string} */ (spec.cron), spec.timezone ?? "UTC") : null;
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const old = store.schedules.get(spec.id);
    const present = old === undefined ? undefined : store.items.get(/** @type {string} */ (pendingId(old)));
    const pending = present !== undefined && store.isChain(present) ? present : undefined;
    // A schedule whose pending occurrence is gone (an offer replaced it) goes on after it.
    const gone = old !== undefined && pending === undefined ? (old.due ?? undefined) : undefined;
    const { schedule, first } = planSchedule(old, spec, copy, cronRule, Date.now(), gone);
    /** @type {Required<Pick<Change, "removes" | "adds" | "updates" | "next" | "schedulePuts">>} */
    const change = { removes: [], adds: [], updates: [], next: store.next, schedulePuts: [schedule] };
    if (first === undefined) {
      if (pending !== undefined) change.updates.push({ record: pending, fields: { value: structuredClone(copy) } });
    } else {
      if (pending !== undefined) change.removes.push(pending);
      const nextId = occurrenceId(spec.id, first);
      if (!store.items.has(nextId))
        change.adds.push({
          id: nextId,
          state: "pending",
          value: structuredClone(copy),
          deadline: first,
          seq: change.next++,
          attempt: 0,
          schedule: spec.id,
        });
    }
    await store.commit(change);
    return scheduleInfoOf(schedule);
  });
}

/** Removes the schedule `id` and its pending occurrence (a run in flight finishes); resolves true if there was one. */
export async function unschedule(store, id) {
  checkScheduleId(id);
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const s = store.schedules.get(id);
    if (s === undefined) return false;
    const pending = store.items.get(/** @type {string} */ (pendingId(s)));
    const removes = pending !== undefined && store.isChain(pending) ? [pending] : [];
    await store.commit({ removes, scheduleDeletes: [s] });
    return true;
  });
}

/** Every schedule, by id: `{ id, every | cron, timezone, start, catchUp, overlap, value, nextRun, lastRun, runs, skipped }`. */
export async function schedules(store) {
  store.refuseIfClosed();
  return store.exclusive(() =>
    [...store.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(scheduleInfoOf),
  );
}
