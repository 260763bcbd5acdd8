// Values: what a queue refuses (thenables, which a take()'s Promise would adopt), and values
// that change after they were offered (a then that appears later, getters that throw or
// close the queue): no call reads a value's then more than once, and no item is lost.
// biome-ignore-all lint/suspicious/noThenProperty: hostile thenable values are what these tests offer
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { DelayQueue } from "tarry-queue";

test("a thenable value is refused at offer with a TypeError naming the argument", async () => {
  const q = new DelayQueue({ capacity: 4 });
  const thenables = [{ then() {} }, Promise.resolve(1), Object.assign(() => {}, { then() {} })];
  for (const v of thenables) {
    assert.throws(
      () => q.offer(v, 0),
      (e) => e instanceof TypeError && /value/.test(e.message) && /then/.test(e.message),
    );
    assert.throws(() => q.offerAt(v, Date.now()), TypeError);
    assert.throws(
      () => q.offerMany([1, v], 0),
      (e) => e instanceof TypeError && /values\[1\]/.test(e.message),
    );
    await assert.rejects(q.put(v, 0), TypeError); // a Promise method rejects, never throws
  }
  const throwing = {
    get then() {
      throw new Error("hostile getter");
    },
  };
  assert.throws(
    () => q.offer(throwing, 0),
    (e) => e instanceof TypeError && /value/.test(e.message),
  );
  assert.equal(q.size, 0, "nothing was added");
  // A value with a `then` that is not a function is a plain value.
  q.offer({ then: 1 }, 0);
  assert.deepEqual(await q.take(), { then: 1 });
  q.close();
});

test("a value that becomes thenable after offer is not lost: its take rejects and carries it", async () => {
  const q = new DelayQueue();
  const value = { id: 1 };
  q.offer(value, 0);
  value.then = (resolve) => resolve("adopted");
  const e = await q.take().then(
    () => assert.fail("the take adopted the thenable"),
    (err) => err,
  );
  assert.ok(e instanceof TypeError && /then/.test(e.message), String(e));
  assert.equal(e.value, value, "the item is on the error");
  assert.equal(q.size, 0);
  q.offer("next", 0);
  assert.equal(await q.take(), "next", "the queue goes on");
  q.close();
});

test("close() from a then getter during delivery leaves nothing broken", async () => {
  const q = new DelayQueue();
  const value = { id: 1 };
  q.offer(value, 5);
  const taken = q.take();
  let reads = 0;
  Object.defineProperty(value, "then", {
    get() {
      reads++;
      q.close();
      return undefined;
    },
  });
  const errors = [];
  const onError = (e) => errors.push(e);
  process.on("uncaughtException", onError);
  try {
    const outcome = await taken.then(
      (v) => ["resolved", v],
      (e) => ["rejected", e],
    );
    await sleep(20);
    assert.deepEqual(errors, [], "nothing thrown from the timer callback");
    assert.ok(reads >= 1);
    assert.ok(outcome[0] === "resolved" ? outcome[1] === value : outcome[1].name === "ClosedError", String(outcome));
    assert.equal(q.closed, true);
  } finally {
    process.off("uncaughtException", onError);
  }
});

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

test("offerMany reads each element once: getters cannot pass the check and then change", () => {
  const q = new DelayQueue();
  let reads = 0;
  const values = ["a", "b"];
  Object.defineProperty(values, 1, {
    get() {
      return reads++ === 0 ? "b" : undefined;
    },
  });
  const hs = q.offerMany(values, 10);
  assert.equal(reads, 1);
  assert.deepEqual(q.toArray(), ["a", "b"]);
  let dreads = 0;
  const delays = [1, 2];
  Object.defineProperty(delays, 1, {
    get() {
      return dreads++ === 0 ? 2 : NaN;
    },
  });
  const hs2 = q.offerMany(["c", "d"], delays);
  assert.equal(dreads, 1);
  assert.ok(hs.concat(hs2).every((h) => Number.isSafeInteger(h) && h > 0));
  assert.equal(q.size, 4);
  q.close();
});
