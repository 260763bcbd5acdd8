// One scenario for every fake-timer framework: take() and Scheduler callbacks follow fake
// time as the test advances it, in deadline order (FIFO among ties), never early. Each
// framework's test (sinon.test.mjs, node.test.mjs, jest.test.mjs, vitest.test.mjs) passes
// how it advances time, and the queue's options (a `clock` where the framework does not
// fake performance.now()).
import assert from "node:assert/strict";
import { DelayQueue, Scheduler } from "tarry-queue";

/** What `p` has settled with by now: { value } or null while pending. */
function settled(p) {
  return Promise.race([p.then((value) => ({ value })), Promise.resolve().then(() => null)]);
}

/**
 * @param {(ms: number) => void} advance moves fake time on and runs the timers due
 * @param {object} [options] for DelayQueue and Scheduler, e.g. { clock: () => Date.now() }
 */
export async function takesFollowFakeTime(advance, options) {
  const q = new DelayQueue(options);
  const s = new Scheduler(options);
  try {
    q.offer("b1", 200);
    q.offer("a", 100);
    q.offer("c", 300);
    q.offer("b2", 200);
    const ran = [];
    s.schedule(() => ran.push("late"), 250);
    s.schedule(() => ran.push("soon"), 50);
    let elapsed = 0;
    for (const [at, value] of [
      [100, "a"],
      [200, "b1"],
      [200, "b2"],
      [300, "c"],
    ]) {
      const p = q.take();
      if (at - elapsed > 1) {
        advance(at - elapsed - 1);
        elapsed = at - 1;
        assert.equal(await settled(p), null, `${value} came out at ${elapsed} ms, before its deadline ${at}`);
      }
      advance(at - elapsed);
      elapsed = at;
      assert.deepEqual(await settled(p), { value }, `${value} did not come out at ${at} ms`);
      assert.deepEqual(ran, at < 250 ? ["soon"] : ["soon", "late"]);
    }
    assert.equal(q.size, 0);
    assert.equal(s.size, 0);
    assert.equal(q.stats.earlyWakes, 0);
  } finally {
    q.close();
    s.close();
  }
}
