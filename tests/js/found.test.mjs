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
