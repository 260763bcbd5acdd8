// A DurableDelayQueue's deliveries: deliver(), called from the object's alarm, hands the items
// due to its handler one at a time in deadline order (invariant 4 of ./queue.js). Each
// delivery raises the item's attempt in storage before the handler runs; its outcome (done,
// back at its retry deadline, or dead) and the start of the next delivery are one
// transaction. A schedule's occurrence moves its schedule on as it goes out (occur()).

import { checkMs, describe, MAX_TIME, options } from "../engine/arguments.js";
import { EMIT, HEARD } from "../engine/events.js";
import { reasonOf } from "../engine/reason.js";
import { occurrenceStep, pendingId } from "../schedule/durable.js";
import { dueOf, occurrenceId } from "../schedule/spec.js";
import { LATENESS_SAMPLES, LATEST_DEADLINE, noop, UNKNOWN } from "./store.js";

/** The contract's default, as on Redis: ms before a retry. */
const RETRY_DELAY_MS = 1000;

/** @typedef {import("./store.js").DurableRecord} DurableRecord */
/** @typedef {import("./store.js").Change} Change */
/** @typedef {import("./store.js").DurableSchedule} DurableSchedule */

/**
 * Call from the object's `alarm()`, every time: hands each item due now to `handler(value,
 * { id, value, deadline, attempt })`, one at a time in deadline order. An item is done
 * (removed) when the handler returns or resolves; when it throws, the item comes back
 * `retryDelayMs` later (a number, or `(attempt, error) => ms`; default 1000), or goes to
 * the dead letters with the error as its reason if that was its `maxAttempts`-th delivery.
 * Then the alarm is set for the new head. Resolves to the number of deliveries made; rejects
 * only when storage fails (the runtime then retries the alarm). Items that come due meanwhile
 * wait for that next alarm. Overlapping calls run one after another; a handler must not
 * await deliver() or close().
 */
export async function deliver(store, handler, opts) {
  if (typeof handler !== "function") throw new TypeError(`handler must be a function, got ${describe(handler)}`);
  const { retryDelayMs = RETRY_DELAY_MS } = options(opts, "options", ["retryDelayMs"], "deliver()");
  if (typeof retryDelayMs !== "function") checkMs(retryDelayMs, "options.retryDelayMs");
  store.refuseIfClosed();
  const run = store.delivery.then(() => deliverDue(store, handler, retryDelayMs));
  store.delivery = run.then(noop, noop);
  return run;
}

async function deliverDue(store, handler, retryDelayMs) {
  // The alarm that called us is spent (storage reports none while its handler runs, and
  // deletes it after): the alarm is written before this returns, whatever memory says.
  await store.exclusive(() => {
    store.alarm = UNKNOWN;
    store.counters.wakes++;
  });
  const now = Date.now();
  let delivered = 0;
  let failed = false;
  let failure;
  try {
    let record = await store.exclusive(() => handOut(store, now, null));
    while (record !== undefined) {
      delivered++;
      const value = structuredClone(record.value);
      /** @type {{ id: string, value: any, deadline: number, attempt: number, schedule?: string }} */
      const job = { id: record.id, value, deadline: record.deadline, attempt: record.attempt };
      if (record.schedule !== undefined) {
        // An occurrence: its schedule, and its due time whatever a retry made its deadline.
        job.schedule = record.schedule;
        job.deadline = dueOf(record.id);
      }
      let error = null;
      try {
        await handler(value, job);
      } catch (e) {
        error = e ?? new Error(String(e));
      }
      const done = record;
      record = await store.exclusive(() => finish(store, done, error, retryDelayMs, now));
    }
  } catch (e) {
    failed = true;
    failure = e;
    if (store.queue[HEARD]("error")) store.queue[EMIT]("error", { error: e });
  }
  try {
    await store.exclusive(() => {
      if (delivered === 0 && store.order.size > 0 && !store.paused) store.counters.earlyWakes++;
      return store.arm();
    });
  } catch (e) {
    if (!failed) throw e;
  }
  if (failed) throw failure;
  return delivered;
}

/**
 * Stores the outcome of `record`'s delivery (done, back at its retry deadline, or dead)
 * and hands out the next item due by `now`, in one transaction; resolves to that item, or
 * undefined when none is due.
 */
async function finish(store, record, error, retryDelayMs, now) {
  // Unless an offer replaced it while its handler ran: then its outcome changes nothing.
  if (store.inFlight !== record) return handOut(store, now, null);
  try {
    /** @type {Change} */
    let outcome;
    const { id, attempt } = record;
    if (error === null) {
      outcome = { removes: [record], tell: [["acked", { id }]] };
    } else if (attempt >= store.maxAttempts) {
      const { reason, stack } = reasonOf(error);
      outcome = burial(store, record, reason, stack);
    } else {
      const delay = retryDelayOf(retryDelayMs, attempt, error);
      const deadline = Math.min(Math.max(Date.now() + delay, -MAX_TIME), LATEST_DEADLINE);
      const back = { ...record, state: "pending", deadline, seq: store.next, inOrder: false, out: false };
      const nacked = { id, attempt, delayMs: deadline - Date.now(), reason: reasonOf(error).reason };
      outcome = { removes: [record], adds: [back], next: store.next + 1, tell: [["nacked", nacked]] };
    }
    return await handOut(store, now, outcome);
  } finally {
    if (store.inFlight === record) {
      // The outcome is not stored: the item stays as storage has it, pending, this attempt
      // counted, and goes back to its place in the order.
      store.inFlight = null;
      record.state = "pending";
      store.restore(record);
    }
  }
}

/**
 * Commits `outcome` (the last delivery's, or null) and, in the same transaction, the start
 * of the next delivery: the item due by `now` that comes first once the outcome is in,
 * its attempt raised. Resolves to that item, now in flight, or undefined when none is due.
 * An item whose last allowed delivery never finished goes to the dead letters instead.
 */
async function handOut(store, now, outcome) {
  for (;;) {
    const back = outcome?.adds?.[0];
    let head = store.order.head();
    if (back !== undefined && (head === undefined || back.deadline < head.deadline)) head = back;
    if (store.paused || head === undefined || head.deadline > now) {
      if (outcome !== null) await store.commit(outcome, { alarm: false });
      return undefined;
    }
    if (head.attempt >= store.maxAttempts) {
      if (outcome !== null) {
        await store.commit(outcome, { alarm: false }); // first, so the two draw different seqs
        outcome = null;
        continue;
      }
      const reason = `its handler did not finish on attempt ${head.attempt} of ${store.maxAttempts} (the object was reset while it ran)`;
      await store.commit(burial(store, head, reason), { alarm: false });
      continue;
    }
    const change = outcome ?? {};
    // Its last delivery began and stored no outcome: the object was reset while it ran.
    const unfinished = head !== back && head.out === true;
    if (head !== back && store.isChain(head)) {
      // A schedule's pending occurrence: catchUp decides what runs, and the next one is
      // placed in this transaction (js/schedule/durable.js).
      const out = occur(store, head, change);
      if (out === undefined) {
        await store.commit(change, { alarm: false });
        outcome = null;
        continue;
      }
      head = out;
    } else if (head === back) {
      back.attempt++; // a new record, stored as it goes out
      back.out = true;
    } else {
      change.updates = [{ record: head, fields: { attempt: head.attempt + 1, out: true } }];
    }
    await store.commit(change, { alarm: false });
    store.order.remove(head);
    head.state = "inFlight";
    store.inFlight = head;
    const c = store.counters;
    const lateness = Math.max(0, Date.now() - head.deadline);
    store.lateness[c.delivered % LATENESS_SAMPLES] = lateness;
    c.delivered++;
    if (head.attempt > 1) c.retried++;
    const { id, attempt, deadline } = head;
    if (unfinished) {
      c.redelivered++;
      store.tell("redelivered", { id, attempt: attempt - 1 }); // the attempt that never finished
    }
    store.tell("delivered", { id, attempt, deadline, lateness });
    return head;
  }
}

/**
 * Adds to `change` what handing out `record`, its schedule's pending occurrence, does now:
 * the schedule moves on (its next occurrence placed), and the occurrence that runs goes out
 * with its attempt raised: `record` itself, or, for a catch-up "one", a new item for the
 * latest missed occurrence. Returns the record to hand out, or undefined when none runs
 * (catchUp "none").
 * @param {DurableRecord} record
 * @param {Change} change
 */
function occur(store, record, change) {
  const s = /** @type {DurableSchedule} */ (store.schedules.get(/** @type {string} */ (record.schedule)));
  // Whether its latest run waits for a retry (a run lasts until done or dead: overlap).
  const latest = s.last === null ? undefined : store.items.get(occurrenceId(s.id, s.last));
  const retrying = latest !== undefined && latest !== record && latest.state === "pending" && latest.schedule === s.id;
  const { run, schedule } = occurrenceStep(s, Date.now(), retrying);
  let next = change.next ?? store.next;
  const removes = [...(change.removes ?? [])];
  const adds = [...(change.adds ?? [])];
  const nextId = pendingId(schedule);
  if (nextId !== undefined && !store.items.has(nextId)) {
    const due = /** @type {number} */ (schedule.due);
    adds.push({
      id: nextId,
      state: "pending",
      value: s.value,
      deadline: due,
      seq: next++,
      attempt: 0,
      schedule: s.id,
    });
  }
  let out;
  if (run === undefined) removes.push(record);
  else if (run === record.deadline) change.updates = [{ record, fields: { attempt: record.attempt + 1, out: true } }];
  else {
    removes.push(record);
    /** @type {DurableRecord} */
    const latest = {
      id: occurrenceId(s.id, run),
      state: "pending",
      value: record.value,
      deadline: run,
      seq: next++,
      attempt: 1,
      out: true,
      schedule: s.id,
    };
    out = latest;
    adds.push(latest);
  }
  Object.assign(change, { removes, adds, next, schedulePuts: [schedule] });
  return run === record.deadline ? record : out;
}

/** The change that moves `record` to the dead letters. */
function burial(store, record, reason, stack) {
  const { id, value, deadline, attempt, schedule } = record;
  const dead = {
    id,
    state: "dead",
    value,
    deadline,
    attempt,
    seq: store.next,
    reason,
    stack,
    diedAt: Date.now(),
    schedule,
  };
  /** @type {Change} */
  const change = { removes: [record], deadAdds: [dead], next: store.next + 1, tell: [["dead", { id, reason }]] };
  return change;
}

/** The wait before a retry: `retryDelayMs` or what it returns for (attempt, error); 0 for what is not a finite number. */
function retryDelayOf(retryDelayMs, attempt, error) {
  const ms = typeof retryDelayMs === "function" ? Number(retryDelayMs(attempt, error)) : retryDelayMs;
  return Number.isFinite(ms) ? ms : 0;
}
