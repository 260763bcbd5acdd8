// What each built app checks, on the page and in each worker: order (FIFO among ties),
// cancel by handle, a timed-out take, never early, the Scheduler. No init(): the first queue
// loads the wasm. Returns a plain object to compare, with the kind of scope it ran in.
export async function exercise({ DelayQueue, Scheduler }) {
  const queue = new DelayQueue();
  const t0 = performance.now();
  // Wall-clock deadlines from one reading, so that a pause between two calls (a loaded
  // machine, a collection) changes no deadline, and b1 and b2 tie exactly (FIFO).
  const base = Date.now() + 5;
  const deadlines = {};
  for (const [value, delay] of [
    ["c", 30],
    ["a", 10],
    ["b1", 20],
    ["b2", 20],
    ["now", 0],
  ]) {
    deadlines[value] = base + delay;
    queue.offerAt(value, base + delay);
  }
  const paid = queue.offerAt("paid", base + 15);
  const cancelled = queue.cancel(paid);
  const got = [];
  const early = [];
  for (let i = 0; i < 5; i++) {
    const value = await queue.take({ timeout: 5000 });
    got.push(value);
    if (Date.now() < deadlines[value]) early.push(value);
  }
  const timedOut = await queue.take({ timeout: 5 });
  const ran = await new Promise((resolve) => {
    const order = [];
    const scheduler = new Scheduler();
    const at = Date.now();
    scheduler.scheduleAt(() => order.push(2), at + 10);
    scheduler.scheduleAt(() => order.push(1), at + 5);
    scheduler.scheduleAt(() => resolve(order), at + 15);
  });
  queue.close();
  return {
    scope: scope(),
    got,
    cancelled,
    early,
    timedOut: timedOut === undefined,
    ran,
    ms: Math.round(performance.now() - t0),
  };
}

/** "page", "module worker" or "classic worker": a module worker has no importScripts(). */
function scope() {
  if (typeof document !== "undefined") return "page";
  try {
    importScripts(); // no arguments: does nothing in a classic worker
    return "classic worker";
  } catch {
    return "module worker";
  }
}
