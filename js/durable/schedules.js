// A DurableDelayQueue's schedules (docs/schedules.md): schedule() stores a schedule and its
// pending occurrence in one transaction, unschedule() removes both, schedules() lists them.
// What a schedule computes (its rule, its next occurrence, catchUp) is js/schedule/durable.js.

import { infoOf as scheduleInfoOf, limitsOfStored, pendingId, planSchedule } from "../schedule/durable.js";
import {
  checkNextRuns,
  checkScheduleId,
  cronRuleOf,
  nextRunsOf,
  occurrenceId,
  scheduleSpec,
} from "../schedule/spec.js";
import { storable } from "./producer.js";

/** @typedef {import("./store.js").DurableRecord} DurableRecord */
/** @typedef {import("./store.js").Change} Change */

/**
 * Creates the schedule `id`, or updates it: `{ every }` (ms, a fixed rate) or `{ cron,
 * timezone }`, each occurrence an item with `value`, delivered like any other (`job.schedule`
 * = `id`, `job.deadline` = its due time). Options: `catchUp` ("one", "all", "none"),
 * `overlap`, `start`, `maxRuns`, `stopAt`. The chain goes on when the rule is the same; the schedule and its
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
    // A schedule whose pending occurrence is gone (an offer replaced it) goes on after it; a
    // paused one has none, and keeps the due time it waits for.
    const gone = old !== undefined && !old.paused && pending === undefined ? (old.due ?? undefined) : undefined;
    const { schedule, first } = planSchedule(old, spec, copy, cronRule, Date.now(), gone);
    /** @type {Required<Pick<Change, "removes" | "adds" | "updates" | "next" | "schedulePuts">>} */
    const change = { removes: [], adds: [], updates: [], next: store.next, schedulePuts: [schedule] };
    if (first === undefined) {
      if (pending !== undefined) change.updates.push({ record: pending, fields: { value: structuredClone(copy) } });
    } else {
      if (pending !== undefined) change.removes.push(pending);
      const nextId = first === null ? "" : occurrenceId(spec.id, first);
      if (first !== null && !store.items.has(nextId))
        change.adds.push(occurrenceItem({ id: spec.id, value: copy }, first, change.next++));
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

/** Every schedule, by id: `{ id, every | cron, timezone, start, catchUp, overlap, value, nextRun, lastRun, runs, skipped, maxRuns, stopAt, paused }`; one that ended stays, with no nextRun. */
export async function schedules(store) {
  store.refuseIfClosed();
  return store.exclusive(() =>
    [...store.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(scheduleInfoOf),
  );
}

/** The pending occurrence of `s` as an item, to add. */
function occurrenceItem(s, due, seq) {
  return {
    id: occurrenceId(s.id, due),
    state: /** @type {const} */ ("pending"),
    value: structuredClone(s.value),
    deadline: due,
    seq,
    attempt: 0,
    schedule: s.id,
  };
}

/**
 * Pauses the schedule `id`: its pending occurrence is taken away and none is placed until
 * resume() (a run in flight finishes). Resolves true when it was running, false when it was
 * paused already, ended, or there is none.
 */
export async function pauseSchedule(store, id) {
  checkScheduleId(id);
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const s = store.schedules.get(id);
    if (s === undefined || s.paused || s.due === null) return false;
    const pending = store.items.get(/** @type {string} */ (pendingId(s)));
    const removes = pending !== undefined && store.isChain(pending) ? [pending] : [];
    await store.commit({ removes, schedulePuts: [{ ...s, paused: true }] });
    return true;
  });
}

/**
 * Resumes the schedule `id`: the occurrence it waited for when paused is placed again; if it
 * came due meanwhile, catchUp decides at its hand-out what runs. Resolves true when it was
 * paused.
 */
export async function resumeSchedule(store, id) {
  checkScheduleId(id);
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const s = store.schedules.get(id);
    if (s === undefined || !s.paused) return false;
    const schedule = { ...s, paused: false };
    const adds = [];
    let next = store.next;
    const pid = pendingId(schedule);
    if (pid !== undefined && !store.items.has(pid)) adds.push(occurrenceItem(s, /** @type {number} */ (s.due), next++));
    await store.commit({ adds, next, schedulePuts: [schedule] });
    return true;
  });
}

/**
 * One extra run of the schedule `id` now: an occurrence due now (`<id>@<now>`), delivered
 * like the others; it counts as a run (runs, lastRun, maxRuns: the schedule's last run ends
 * it), and the pending occurrence stays. With overlap false, while a run of the schedule
 * lasts (handed out, or waiting for its retry), nothing is added: false. A paused schedule
 * runs and stays paused. Resolves false for an ended schedule or none.
 */
export async function trigger(store, id) {
  checkScheduleId(id);
  store.refuseIfClosed();
  return store.exclusive(async () => {
    const s = store.schedules.get(id);
    if (s === undefined || (s.due === null && !s.paused)) return false;
    if (!s.overlap && s.last !== null && store.items.has(occurrenceId(id, s.last))) return false; // a run lasts
    const now = Math.max(Math.ceil(Date.now()), (s.last ?? Number.NEGATIVE_INFINITY) + 1);
    const runId = occurrenceId(id, now);
    if (store.items.has(runId)) return false; // the pending occurrence is due this very ms
    let next = store.next;
    const run = { ...occurrenceItem(s, now, next++) };
    const schedule = { ...s, last: now, began: Date.now(), runs: s.runs + 1 };
    const removes = [];
    if (s.maxRuns !== null && schedule.runs >= s.maxRuns) {
      const pending = s.due === null ? undefined : store.items.get(/** @type {string} */ (pendingId(s)));
      if (pending !== undefined && store.isChain(pending)) removes.push(pending);
      schedule.due = null;
      schedule.paused = false;
    }
    await store.commit({ removes, adds: [run], next, schedulePuts: [schedule] });
    return true;
  });
}

/**
 * The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms), from its rule: the
 * pending one first (a paused one's, the one resume() places), none after stopAt, no more
 * than maxRuns leaves. Reads the schedule only. Empty for an ended schedule or none.
 */
export async function nextRuns(store, id, n) {
  checkScheduleId(id);
  checkNextRuns(n);
  store.refuseIfClosed();
  return store.exclusive(() => {
    const s = store.schedules.get(id);
    if (s === undefined || s.due === null) return [];
    return nextRunsOf(s.rule, s.due, n, limitsOfStored(s));
  });
}
