// Events of the in-memory engines: DelayQueue's `delivered` and `expired`, the Scheduler's
// `delivered`, `occurrence` and `skipped`, and the listener bookkeeping that lets a queue
// build no event when nobody listens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DelayQueue, Scheduler } from "tarry-queue";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Lets posted events (dispatched in a microtask) arrive. */
const settle = () => new Promise((resolve) => setImmediate(resolve));
/** Waits for `done()` to hold: a loaded machine runs timers late, so no fixed sleep is enough. */
async function until(done, what) {
  for (const end = Date.now() + 5000; !done(); await sleep(5)) {
    if (Date.now() > end) assert.fail(`not within 5 s: ${what}`);
  }
}

/** Records [type, detail] of each event of `types` on `target`. */
function record(target, types) {
  const log = [];
  for (const type of types) target.addEventListener(type, (e) => log.push([type, e.detail]));
  return log;
}

test("a DelayQueue is an EventTarget; its events are CustomEvents whose detail carries the data", async () => {
  const q = new DelayQueue();
  assert.ok(q instanceof EventTarget);
  let event;
  q.addEventListener("delivered", (e) => {
    event = e;
  });
  q.offer("x", 0, { id: "x1" });
  assert.equal(q.poll(), "x");
  assert.equal(event, undefined, "posted: dispatched after the call");
  await settle();
  assert.ok(event instanceof CustomEvent);
  assert.equal(event.type, "delivered");
  assert.equal(event.detail.id, "x1");
  assert.equal(event.detail.value, "x");
  assert.ok(event.detail.lateness >= 0);
  q.close();
});

test("delivered: one event per item handed out, by take, poll, drain and for await, in that order, with lateness", async () => {
  // A clock the test moves: d is not yet due when drain() runs, however late the machine.
  let now = 0;
  const q = new DelayQueue({ clock: () => now });
  const log = record(q, ["delivered"]);
  q.offer("a", 0);
  q.offer("b", 0);
  q.offer("c", 0);
  q.offer("d", 15);
  now = 5;
  assert.equal(await q.take(), "a");
  assert.equal(q.poll(), "b");
  assert.deepEqual(q.drain(), ["c"]);
  now = 15;
  for await (const v of q) {
    assert.equal(v, "d");
    break;
  }
  await settle();
  assert.deepEqual(
    log.map(([, d]) => d.value),
    ["a", "b", "c", "d"],
  );
  assert.deepEqual(
    log.map(([, d]) => d.lateness),
    [5, 5, 5, 0],
    "a, b and c taken 5 ms past their deadline, d at its own",
  );
  q.close();
});

test("expired: once per item as its deadline passes while it is in the queue, which keeps it", async () => {
  const q = new DelayQueue();
  const log = record(q, ["expired"]);
  q.offer("first", 10, { id: "f" });
  q.offer("second", 25);
  q.offer("later", 60_000);
  await until(() => log.length >= 2, "two expired events");
  assert.deepEqual(
    log.map(([, d]) => [d.id, d.value]),
    [
      ["f", "first"],
      [undefined, "second"],
    ],
  );
  assert.equal(q.size, 3, "nothing was taken");
  await sleep(30);
  assert.equal(log.length, 2, "each item once");
  q.close();
});

test("expired before delivered for an item taken before the timer saw it; none for one cancelled in time", async () => {
  const q = new DelayQueue();
  const log = record(q, ["expired", "delivered"]);
  q.offer("now", 0);
  const h = q.offer("cancelled", 20);
  assert.equal(q.poll(), "now");
  q.cancel(h);
  await sleep(40);
  await settle();
  assert.deepEqual(
    log.map(([type, d]) => [type, d.value]),
    [
      ["expired", "now"],
      ["delivered", "now"],
    ],
  );
  q.close();
});

test("expired again after a reschedule moves an item that had expired; offerMany and replaced ids too", async () => {
  // A clock the test moves: the four calls below read one instant, however slow the machine.
  let now = 0;
  const q = new DelayQueue({ clock: () => now });
  const log = record(q, ["expired"]);
  const h = q.offer("moved", 0);
  await until(() => log.length >= 1, "moved expired");
  q.reschedule(h, 10);
  q.offerMany(["m1", "m2"], [5, 5]);
  q.offer("named", 5, { id: "n" });
  q.offer("named again", 10, { id: "n" });
  now = 10;
  await until(() => log.length >= 5, "five expired events");
  await sleep(20); // and no more
  assert.deepEqual(
    log.map(([, d]) => d.value),
    ["moved", "m1", "m2", "moved", "named again"],
  );
  q.close();
});

test("expired and ifExists: extend that moves an item expires it again; keep, or extend that does not move it, does not", async () => {
  const q = new DelayQueue();
  const log = record(q, ["expired"]);
  q.offer("kept", 0, { id: "k" });
  q.offer("stays", 0, { id: "s" });
  q.offer("moves", 0, { id: "m" });
  await sleep(10);
  assert.equal(log.length, 3);
  q.offer("kept 2", 0, { id: "k", ifExists: "keep" });
  q.offer("stays 2", -1000, { id: "s", ifExists: "extend" }); // earlier: not moved, seen expired already
  q.offer("moves 2", 10, { id: "m", ifExists: "extend" });
  await until(() => log.length >= 4, "moves 2 expired");
  await sleep(20); // and nothing else
  assert.deepEqual(
    log.map(([, d]) => d.value),
    ["kept", "stays", "moves", "moves 2"],
  );
  assert.deepEqual(q.drain(), ["kept", "stays 2", "moves 2"]);
  q.close();
});

test("an expired listener arms the timer while it is attached, and only then", async () => {
  const q = new DelayQueue();
  q.offer("x", 60_000);
  assert.equal(q.stats.timersArmed, 0, "nothing waits");
  const off = q.on("expired", () => {});
  await settle();
  assert.equal(q.stats.timersArmed, 1, "the listener waits for the deadline");
  off();
  assert.equal(q.stats.timersArmed, 0);
  const controller = new AbortController();
  q.addEventListener("expired", () => {}, { signal: controller.signal });
  await settle();
  assert.equal(q.stats.timersArmed, 1);
  controller.abort();
  assert.equal(q.stats.timersArmed, 0, "a listener added with a signal leaves when it aborts");
  q.close();
});

test("listener bookkeeping follows EventTarget: duplicates are one, once leaves after its event, capture counts apart", async () => {
  const q = new DelayQueue();
  q.offer("x", 60_000);
  const fn = () => {};
  q.addEventListener("expired", fn);
  q.addEventListener("expired", fn);
  q.removeEventListener("expired", fn);
  assert.equal(q.stats.timersArmed, 0, "the same listener twice is one registration");
  q.addEventListener("expired", fn);
  q.addEventListener("expired", fn, { capture: true });
  q.removeEventListener("expired", fn);
  assert.equal(q.stats.timersArmed, 1, "the capture registration stays");
  q.removeEventListener("expired", fn, true);
  assert.equal(q.stats.timersArmed, 0);
  let calls = 0;
  q.addEventListener("expired", { handleEvent: () => calls++ }, { once: true });
  q.offer("due", 0);
  await sleep(20);
  assert.equal(calls, 1);
  assert.equal(q.stats.timersArmed, 0, "a once listener left after its event");
  q.close();
});

test("on(type, fn) calls fn(detail, event) and returns the function that unsubscribes", async () => {
  const q = new DelayQueue();
  const seen = [];
  const off = q.on("delivered", (detail, event) => seen.push([detail.value, event.type]));
  q.offer(1, 0);
  q.poll();
  await settle();
  off();
  q.offer(2, 0);
  q.poll();
  await settle();
  assert.deepEqual(seen, [[1, "delivered"]]);
  assert.throws(() => q.on("delivered", "nope"), /listener must be a function/);
  q.close();
});

test("a listener may call the queue: events arrive after the call that made them", async () => {
  const q = new DelayQueue();
  const got = [];
  q.on("expired", () => got.push(q.poll()));
  q.offer("a", 5);
  q.offer("b", 5);
  for (const until = Date.now() + 5000; got.length < 2 && Date.now() < until; ) await sleep(10); // a loaded machine may be late
  assert.deepEqual(got, ["a", "b"]);
  assert.equal(q.size, 0);
  q.close();
});

test("Scheduler: delivered for one-off callbacks; occurrence for each run of a schedule", async () => {
  const s = new Scheduler();
  const log = record(s, ["delivered", "occurrence"]);
  s.schedule(() => {}, 5);
  const every = s.every(20, () => {});
  await until(() => log.filter(([type]) => type === "occurrence").length >= 2, "two occurrences");
  every.cancel();
  s.close();
  await settle();
  assert.equal(log[0][0], "delivered");
  assert.ok(log[0][1].lateness >= 0);
  const runs = log.filter(([type]) => type === "occurrence").map(([, d]) => d);
  assert.ok(runs.length >= 2, `${runs.length} occurrences`);
  for (const d of runs) {
    assert.equal(d.schedule, every.id);
    assert.equal(typeof d.due, "number");
    assert.ok(d.lateness >= 0);
  }
  for (let i = 1; i < runs.length; i++) {
    const step = runs[i].due - runs[i - 1].due;
    assert.ok(step > 0 && step % 20 === 0, `due times in order, on the period: ${step}`);
  }
});

test("Scheduler: skipped with reason overlap while a run is pending, missed when catchUp skips", async () => {
  const s = new Scheduler();
  const log = record(s, ["skipped", "occurrence"]);
  // Runs that last 35 ms on a 10 ms period: the ones due meanwhile are skipped (overlap: false).
  const slow = s.every(10, () => sleep(35));
  await until(() => log.some(([type, d]) => type === "skipped" && d.reason === "overlap"), "an overlap");
  slow.cancel();
  await settle();
  const overlaps = log.filter(([type, d]) => type === "skipped" && d.reason === "overlap");
  assert.ok(overlaps.length >= 1, JSON.stringify(log));
  for (const [, d] of overlaps) assert.equal(d.schedule, slow.id);
  log.length = 0;
  // A callback that blocks the thread for 60 ms on a 10 ms period: catchUp "one" skips.
  const blocking = s.every(10, () => {
    const until = Date.now() + 60;
    while (Date.now() < until);
  });
  await until(() => log.some(([type, d]) => type === "skipped" && d.reason === "missed"), "a missed occurrence");
  blocking.cancel();
  s.close();
  await settle();
  const missed = log.filter(([type, d]) => type === "skipped" && d.reason === "missed");
  assert.ok(missed.length >= 1, JSON.stringify(log));
  const runs = log.filter(([type]) => type === "occurrence").map(([, d]) => d.due);
  for (const [, d] of missed) {
    assert.equal(d.schedule, blocking.id);
    assert.ok(!runs.includes(d.due), "a missed occurrence does not run");
  }
});

test("DurableDelayQueue: redelivered for a delivery that never finished (the object was reset), before its next delivered", async () => {
  const { DurableDelayQueue, FakeStorage } = await import("./durable-helpers.mjs");
  const storage = new FakeStorage();
  const q = await DurableDelayQueue.open(storage, { maxAttempts: 3 });
  await q.offer("crashes the object", 0, { id: "x" });
  let reset;
  void q.deliver(async () => {
    reset = storage.clone(); // the object is reset while this runs: storage as it is now
    await new Promise(() => {});
  });
  while (reset === undefined) await new Promise((resolve) => setImmediate(resolve));
  const again = await DurableDelayQueue.open(reset, { maxAttempts: 3 });
  const log = [];
  for (const type of ["delivered", "redelivered", "acked"]) {
    again.addEventListener(type, (e) => log.push([type, e.detail.id, e.detail.attempt]));
  }
  assert.equal(await again.deliver(() => {}), 1);
  assert.deepEqual(log, [
    ["redelivered", "x", 1],
    ["delivered", "x", 2],
    ["acked", "x", undefined],
  ]);
  const stats = await again.stats();
  assert.deepEqual([stats.redelivered, stats.retried], [1, 1], "stats count the redelivery the event told");
});
