// Defects the fuzzers found (tests/fuzz/: the JS face against a model, the snapshot decoder),
// each kept by a test of its own that failed before its fix.
// biome-ignore-all lint/suspicious/noThenProperty: values with a watched `then` are what these tests offer
import { test } from "node:test";
import assert from "node:assert/strict";
import { DelayQueue } from "tarry-queue";

/** A value whose `then` getter counts its reads (and is no thenable). */
function watched() {
  const value = { reads: 0 };
  Object.defineProperty(value, "then", {
    get() {
      value.reads++;
      return undefined;
    },
  });
  return value;
}

test("put() reads a value's then once, as offer() does (it read it twice)", async () => {
  const q = new DelayQueue();
  const value = watched();
  const put = q.put(value, 60_000);
  assert.equal(value.reads, 1, "read once, by the check");
  assert.ok(Number.isSafeInteger(await put));
  assert.equal(q.peek(), value);
  const offered = watched();
  q.offer(offered, 60_000);
  assert.equal(offered.reads, 1);
  q.close();
});

/** Replaces setTimeout/clearTimeout (js/timer.js looks them up at call time): timers never fire. */
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

test("for await does not drop the error that carries a value because the queue closed meanwhile (the value was lost)", async () => {
  const q = new DelayQueue();
  const value = { reads: 0 };
  Object.defineProperty(value, "then", {
    get() {
      // Read once at offer; the second read is the hand-out to the take, which closes the queue.
      if (++value.reads === 1) return undefined;
      q.close();
      throw new Error("a then getter that throws");
    },
  });
  q.offer(value, 0);
  const got = [];
  const outcome = await (async () => {
    for await (const item of q) got.push(item);
  })().then(
    () => "the loop ended quietly",
    (e) => e,
  );
  assert.deepEqual(got, []);
  assert.ok(outcome instanceof TypeError, `${outcome}`);
  assert.equal(outcome.value, value, "the item is on the error");
  assert.equal(q.closed, true);
});

test("toArray() and snapshot() keep FIFO between deadlines -0 and 0, as take() does (-0 went first)", async () => {
  // A clock that reads -0 (a fake one, say) and a delay of -0 give the deadline -0.
  const q = new DelayQueue({ clock: () => -0 });
  q.offer("first", 0); // deadline -0 + 0 = 0
  q.offer("second", -0); // deadline -0 + -0 = -0: equal, so it queues behind
  assert.deepEqual(q.toArray(), ["first", "second"]);
  assert.deepEqual(
    q.snapshot().items.map((i) => i.value),
    ["first", "second"],
  );
  assert.deepEqual([await q.take(), await q.take()], ["first", "second"]);
  q.close();
});

test("restore(): a bad version or size of any kind gets the decoder's TypeError, and none of its code runs", () => {
  let deep = [1];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  let called = 0;
  const hostile = {
    toString() {
      called++;
      return "1";
    },
  };
  const bads = { "a null-prototype object": Object.create(null), "a revoked Proxy": revoked, "a deep array": deep };
  Object.assign(bads, { "a toString": hostile, "a Symbol.toPrimitive": { [Symbol.toPrimitive]: () => 1 } });
  for (const [what, bad] of Object.entries(bads)) {
    for (const [field, snapshot] of [
      ["version", { version: bad, size: 0, items: [] }],
      ["size", { version: 1, size: bad, items: [] }],
    ]) {
      assert.throws(
        () => DelayQueue.restore(snapshot),
        (e) => e instanceof TypeError && e.message.startsWith("DelayQueue.restore():") && e.message.includes(field),
        `${field}: ${what}`,
      );
    }
  }
  assert.equal(called, 0, "toString of the input is not called");
});

test("restore() reads the items' length once: one that grows after the check cannot build half a queue", () => {
  const real = [1, 2, 3, 4, 5].map((value) => ({ value, deadline: 1 }));
  let reads = 0;
  // 1 when the capacity is checked, 5 afterwards.
  const items = new Proxy(real, {
    get: (t, k, r) => (k === "length" ? (reads++ === 0 ? 1 : 5) : Reflect.get(t, k, r)),
  });
  let q;
  try {
    q = DelayQueue.restore({ version: 1, size: 5, items }, { capacity: 2 });
  } catch (e) {
    assert.ok(e instanceof TypeError || e instanceof RangeError, String(e));
    assert.match(e.message, /^DelayQueue\.restore\(\)/);
    return;
  }
  const size = q.size;
  q.close();
  assert.fail(`restored ${size} of the 5 items it read, with no error`);
});
