// The one host timer of a queue or scheduler (js/engine/timer.js) when the host refuses it (workerd
// at module scope does) and when the head changes under a waiting take: the queue stays
// consistent, and the timer is armed for the right head.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { DelayQueue, Scheduler } from "tarry-queue";

test("a host timer that refuses to arm leaves the queue consistent and usable", async () => {
  const realSetTimeout = globalThis.setTimeout;
  const q = new DelayQueue();
  q.offer("later", 20);
  globalThis.setTimeout = () => {
    throw new Error("Disallowed operation called within global scope");
  };
  let p;
  try {
    p = q.take();
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  await assert.rejects(p, /Disallowed operation/);
  assert.equal(q.size, 1, "the item stays");
  assert.equal(q.stats.takers, 0);
  assert.equal(await q.take(), "later", "the queue still works");

  const s = new Scheduler();
  globalThis.setTimeout = () => {
    throw new Error("no timers here");
  };
  try {
    assert.throws(() => s.schedule(() => {}, 10), /no timers here/);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(s.size, 0, "the refused callback was not kept");
  let ran = false;
  s.schedule(() => (ran = true), 1);
  await sleep(30);
  assert.equal(ran, true);
  s.close();
  q.close();
});

test("a refused timer leaves the takes already waiting with a timer, or rejects them with the error", async () => {
  const realSetTimeout = globalThis.setTimeout;
  let now = 0; // a clock the test moves: "sooner" is the new head however slow the machine
  const q = new DelayQueue({ clock: () => now });
  q.offer("later", 40);
  const first = q.take(); // arms the timer for 40 ms
  let refusals = 1;
  globalThis.setTimeout = (...args) => {
    if (refusals-- > 0) throw new Error("refused once");
    return realSetTimeout(...args);
  };
  try {
    assert.throws(() => q.offer("sooner", 20), /refused once/); // a new head needs a new timer
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(q.size, 1, "the refused offer added nothing");
  assert.equal(q.stats.timersArmed, 1, "the waiting take has its timer back");
  now = 40;
  assert.equal(await first, "later");
  q.close();
});

/** Replaces setTimeout/clearTimeout (js/engine/timer.js looks them up at call time): timers never fire. */
function heldTimers() {
  const real = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout };
  const live = new Map();
  let next = 1;
  globalThis.setTimeout = (_fn, ms) => {
    live.set(next, ms);
    return next++;
  };
  globalThis.clearTimeout = (id) => live.delete(id);
  return {
    live,
    restore() {
      Object.assign(globalThis, real);
    },
  };
}

test("poll() taking the head while a take waits re-arms the timer for the new head (it stayed armed for the old one)", () => {
  const timers = heldTimers();
  try {
    let now = 0;
    const q = new DelayQueue({ clock: () => now });
    q.offer("a", 10);
    q.offer("b", 1000);
    const taken = q.take();
    assert.deepEqual([...timers.live.values()], [10]);
    now = 10; // due, and polled before the timer fires
    assert.equal(q.poll(), "a");
    assert.deepEqual([...timers.live.values()], [990], "armed for b, the new head");
    assert.equal(q.stats.timersArmed, 1);
    q.close();
    taken.catch(() => {});
  } finally {
    timers.restore();
  }
});
