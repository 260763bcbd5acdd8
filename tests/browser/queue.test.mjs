// The package's browser entry (js/web.js) in headless Chromium, where browsers differ from
// Node: a hidden tab's throttled timers and the visibilitychange flush, a queue inside a
// Web Worker, and a main thread blocked while items expire.
// Timing: order and "never early" are asserted exactly, lateness with wide margins.

import { test } from "node:test";
import assert from "node:assert/strict";
import { sharedBrowser } from "../../tools/chromium.mjs";

const browser = sharedBrowser();

/** Deadline order: by delay, then (equal delays) by offer order, as the items were made. */
/**
 * The order items must come out in: by deadline, FIFO among equal ones. Each item's
 * `deadline` is performance.now() + delay read just before its offer, so a slow offer loop
 * (a GC, a cold JIT) that makes a later, shorter delay fall due after an earlier, longer
 * one is judged by when the items were really due, not by their delays alone.
 */
function expectedOrder(items) {
  return [...items].sort((a, b) => a.deadline - b.deadline || a.i - b.i).map((x) => x.i);
}

test("a tab shown again delivers every overdue item at once, in order, without its timer", async () => {
  const page = await browser.open("/tests/browser/pages/blank.html");
  const r = await page.evaluate(async () => {
    // A hidden tab whose timers never fire (throttled without end), set up before the
    // queue exists: the queue arms its timer through the global setTimeout.
    let visibility = "hidden";
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => visibility });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => visibility !== "visible" });
    const realSetTimeout = setTimeout;
    const held = [];
    globalThis.setTimeout = (_fn, ms) => held.push(ms);
    globalThis.clearTimeout = () => {};
    const sleep = (ms) => new Promise((r) => realSetTimeout(r, ms));
    // One macrotask later: every microtask the event started has run by then.
    const nextTask = () =>
      new Promise((r) => {
        const c = new MessageChannel();
        c.port1.onmessage = r;
        c.port2.postMessage(null);
      });

    const { DelayQueue, init } = await import("/js/web.js");
    await init();
    // The queue's clock is ours, so each item's deadline is known exactly (a real clock read
    // beside offer() can be a stall away from the one the queue makes).
    let now = 1_000;
    const queue = new DelayQueue({ clock: () => now });
    const got = [];
    (async () => {
      for await (const item of queue) got.push({ i: item.i, at: now, deadline: item.deadline });
    })();

    const items = [];
    for (let i = 0; i < 40; i++) items.push({ i, delay: ((i * 7) % 20) * 5 + 10 }); // 10..105 ms, each delay twice
    for (const item of items) {
      item.deadline = now + item.delay;
      queue.offer(item, item.delay); // equal delays, equal deadlines: FIFO among them
    }
    queue.offer({ i: -1, delay: 60_000, deadline: now + 60_000 }, 60_000);
    now += 300; // everything but the last is overdue now
    await sleep(50);

    const whileHidden = got.length;
    document.dispatchEvent(new Event("visibilitychange")); // still hidden: nothing to do
    await nextTask();
    const afterHiddenEvent = got.length;

    visibility = "visible";
    const shownAt = now;
    document.dispatchEvent(new Event("visibilitychange"));
    await nextTask();
    const afterShown = got.length;
    await sleep(50);
    return {
      items,
      got,
      whileHidden,
      afterHiddenEvent,
      afterShown,
      shownAt,
      held,
      size: queue.size,
      stats: queue.stats,
      lastGot: got.length,
    };
  });

  assert.ok(r.held.length >= 1, "the queue armed a timer (which never fired)");
  assert.equal(r.whileHidden, 0, "nothing delivered while the timer was held back");
  assert.equal(r.afterHiddenEvent, 0, "a visibilitychange to hidden flushes nothing");
  assert.equal(r.afterShown, 40, "every overdue item, within the task that showed the page");
  assert.equal(r.lastGot, 40, "and nothing more afterwards");
  assert.deepEqual(
    r.got.map((x) => x.i),
    expectedOrder(r.items),
    "in deadline order, FIFO among equal delays",
  );
  for (const x of r.got) {
    assert.ok(x.at >= x.deadline, `item ${x.i} delivered ${x.deadline - x.at} ms early`);
    assert.ok(x.at >= r.shownAt, `item ${x.i} delivered before the page was shown`);
  }
  assert.equal(r.size, 1, "the item due in a minute stays");
  assert.ok(r.stats.timersArmed <= 1);
  await page.close();
});

test("a DelayQueue runs inside a Web Worker", async () => {
  const page = await browser.open("/tests/browser/pages/blank.html");
  const r = await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker("/tests/browser/pages/worker.js", { type: "module" });
        // The worker reports within about a second; if it never does, say so rather than hang.
        const silent = setTimeout(() => {
          worker.terminate();
          reject(new Error("the worker sent nothing in 30 s"));
        }, 30_000);
        worker.onmessage = (e) => {
          clearTimeout(silent);
          worker.terminate();
          resolve(e.data);
        };
        worker.onerror = (e) => {
          clearTimeout(silent);
          reject(new Error(`worker: ${e.message}`));
        };
      }),
  );
  assert.equal(r.scope, "DedicatedWorkerGlobalScope");
  assert.equal(r.hasDocument, false);
  assert.equal(r.timedOut, true, "take({timeout: 0}) with nothing due resolves undefined");
  assert.equal(r.items.length, 60);
  assert.equal(r.got.length, 60, "every item came out (each take waited at most 5 s)");
  assert.deepEqual(
    r.got.map((x) => x.i),
    expectedOrder(r.items),
    "deadline order; the cancelled item never comes",
  );
  const late = r.got.map((x) => x.late);
  assert.ok(Math.min(...late) >= 0, `an item came ${-Math.min(...late)} ms early`);
  assert.ok(Math.max(...late) < 1000, `an item came ${Math.max(...late)} ms late`);
  assert.ok(r.stats.timersArmed <= 1);
  // One timer, re-armed per distinct deadline at most (plus the take-timeout and re-arms).
  assert.ok(r.stats.timerArms <= 60 + 5, `${r.stats.timerArms} timer arms for 60 items`);
  console.log(
    `# worker: 60 items, lateness median ${late.sort((a, b) => a - b)[30].toFixed(2)} ms, max ${late.at(-1).toFixed(2)} ms, ${r.stats.timerArms} timer arms`,
  );
  await page.close();
});

test("a main thread blocked for 500 ms: every overdue item at once, in order, none lost", async () => {
  const page = await browser.open("/tests/browser/pages/blank.html");
  const r = await page.evaluate(async () => {
    const { DelayQueue, init } = await import("/js/web.js");
    await init();
    const queue = new DelayQueue();
    const n = 200;
    const items = [];
    for (let i = 0; i < n; i++) items.push({ i, delay: ((i * 71) % 100) * 3 }); // 0..297 ms, each twice
    const got = [];
    const consumed = (async () => {
      for await (const item of queue) {
        got.push({ i: item.i, at: performance.now(), deadline: item.deadline });
        if (got.length === n) break;
      }
    })();
    for (const item of items) {
      item.deadline = performance.now() + item.delay;
      queue.offer(item, item.delay);
    }
    const wakesBefore = queue.stats.wakes;
    const blockedAt = performance.now();
    while (performance.now() - blockedAt < 500); // a long task: timers cannot fire
    const unblockedAt = performance.now();
    await Promise.race([consumed, new Promise((r) => setTimeout(r, 5000))]);
    return {
      items,
      got,
      blockedAt,
      unblockedAt,
      wakes: queue.stats.wakes - wakesBefore,
      stats: queue.stats,
      size: queue.size,
    };
  });

  assert.equal(r.got.length, 200, "none lost");
  assert.equal(r.size, 0);
  assert.deepEqual(
    r.got.map((x) => x.i),
    expectedOrder(r.items),
    "in deadline order, FIFO among equal delays",
  );
  for (const x of r.got) assert.ok(x.at >= x.deadline, `item ${x.i} delivered ${x.deadline - x.at} ms early`);
  // Everything was overdue when the thread unblocked; it all came out in one go.
  const first = r.got[0].at;
  const last = r.got.at(-1).at;
  assert.ok(first >= r.unblockedAt, "nothing delivered during the block");
  assert.ok(last - first < 100, `the overdue items took ${last - first} ms to come out`);
  assert.ok(r.wakes <= 2, `${r.wakes} timer wake-ups for one batch`);
  assert.ok(first - r.unblockedAt < 1000, `first delivery ${first - r.unblockedAt} ms after unblocking`);
  console.log(
    `# blocked 500 ms: 200 items out ${(first - r.unblockedAt).toFixed(1)} ms after unblocking, over ${(last - first).toFixed(2)} ms, ${r.wakes} wake-up(s); queue lateness p50 ${r.stats.latenessP50.toFixed(1)} ms, delivered ${r.stats.delivered}`,
  );
  await page.close();
});

test("queue.stats counts every item a take() hands out, with its lateness, even those already due", async () => {
  const page = await browser.open("/tests/browser/pages/blank.html");
  const r = await page.evaluate(async () => {
    const { DelayQueue, init } = await import("/js/web.js");
    await init();
    const queue = new DelayQueue();
    for (let i = 0; i < 50; i++) queue.offer(i, i);
    const blockedAt = performance.now();
    while (performance.now() - blockedAt < 150); // all 50 are 100+ ms late now
    const got = [];
    for await (const item of queue) if (got.push(item) === 50) break;
    return { got: got.length, stats: queue.stats };
  });
  assert.equal(r.got, 50);
  assert.equal(r.stats.delivered, 50, `stats.delivered is ${r.stats.delivered} after 50 takes`);
  assert.ok(r.stats.latenessP50 >= 100, `stats.latenessP50 is ${r.stats.latenessP50} ms for items 100+ ms late`);
  await page.close();
});
