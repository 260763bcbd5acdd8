// A queue's schedules as the dashboard and `tarry-queue inspect` show them: each schedule's
// rule, its next and last run, its counts, and what became of its last run, read with the
// engine contract's methods only (`schedules()`, and `get()` of the last run's occurrence,
// whose id is `<schedule id>@<its due time>`). The one place that says what an outcome is:
//
//   due       a run now (trigger) waits for its first delivery
//   running   the occurrence is handed out and not settled yet
//   retrying  it failed and waits for its next attempt
//   failed    it is a dead letter (its reason beside it)
//   done      the queue no longer holds it: acked (or its dead letter was removed since)

/** The schedules shown at most (the rest are counted): one get() each. */
export const MAX_SCHEDULES = 200;

/**
 * The schedules of `queue`, or null when the engine has none (no schedules()).
 * @param {{ schedules?: () => Promise<any[]>, get: (id: string) => Promise<any> }} queue
 * @param {{ values?: boolean }} [options] values: keep each schedule's value
 * @returns {Promise<{ schedules: object[], total: number } | null>}
 */
export async function scheduleReport(queue, { values = false } = {}) {
  if (typeof queue.schedules !== "function") return null;
  const all = await queue.schedules();
  const shown = all.slice(0, MAX_SCHEDULES);
  const schedules = await Promise.all(shown.map((s) => scheduleShown(queue, s, values)));
  return { schedules, total: all.length };
}

/** One schedule with the outcome of its last run. */
async function scheduleShown(queue, s, values) {
  const { value, ...rest } = s;
  const shown = {
    ...rest,
    rule: s.every !== undefined ? `every ${s.every} ms` : `cron ${s.cron} (${s.timezone})`,
    lastOutcome: undefined,
  };
  if (values) shown.value = value;
  if (s.lastRun !== undefined) {
    const run = await queue.get(`${s.id}@${s.lastRun}`);
    shown.lastOutcome = outcomeOf(run);
    if (run?.state === "dead") shown.lastReason = run.reason;
  }
  return shown;
}

/** What became of a run, from the item its occurrence is (or undefined when it is gone). */
function outcomeOf(item) {
  if (item === undefined) return "done";
  if (item.state === "inFlight") return "running";
  if (item.state === "pending") return item.attempt > 0 ? "retrying" : "due";
  return "failed";
}
