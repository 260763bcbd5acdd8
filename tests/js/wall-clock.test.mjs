// Wall-clock deadlines (offerAt, js/memory/clock.js) while the wall clock steps: converted with the
// clocks as they are at the call, never early after a backward step, FIFO among equal
// deadlines across a forward one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DelayQueue } from "tarry-queue";

/** Replaces Date.now by the real wall clock shifted by `shift.ms` (fractional steps allowed). */
function steppableWallClock() {
  const real = Date.now;
  const shift = { ms: 0 };
  Date.now = () => Math.floor(performance.timeOrigin + performance.now() + shift.ms);
  shift.restore = () => (Date.now = real);
  return shift;
}

test("offerAt converts with the clocks as they are at the call: never early after a backward step", () => {
  const shift = steppableWallClock();
  const q = new DelayQueue();
  try {
    for (let i = 0; i < 30; i++) {
      shift.ms = 0;
      q.offerAt("warm", Date.now() - 1);
      q.offerAt("warm", Date.now() - 1);
      q.drain();
      shift.ms = -0.9; // the wall clock steps back 0.9 ms
      const at = Date.now() + 2;
      q.offerAt("x", at);
      for (let v = q.poll(); v !== "x"; v = q.poll()); // spin: the first moment it is due
      assert.ok(Date.now() >= at, `came out ${at - Date.now()} ms before its wall-clock deadline`);
    }
  } finally {
    shift.restore();
    q.close();
  }
});

test("offerAt keeps FIFO for equal wall-clock deadlines across a forward step", async () => {
  const shift = steppableWallClock();
  const q = new DelayQueue();
  try {
    const at = Date.now() + 30;
    q.offerAt("first", at);
    shift.ms = 5; // the wall clock steps 5 ms forward
    q.offerAt("second", at);
    shift.ms = 10;
    q.offerAt("third", at);
    assert.deepEqual([await q.take(), await q.take(), await q.take()], ["first", "second", "third"]);
    assert.ok(Date.now() >= at);
  } finally {
    shift.restore();
    q.close();
  }
});
