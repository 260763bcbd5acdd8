// Order (js/engine/order.js), the (deadline, seq) index DurableDelayQueue pages through, against a
// sorted array: seeded random adds, removes (present and absent), heads and pages after
// present and absent keys, with runs split and dropped (thousands of records, runs of 512).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Order } from "../../js/engine/order.js";
import { rng } from "../../bench/rng.mjs";

const byKey = (a, b) => a.deadline - b.deadline || a.seq - b.seq;
/** Whether record r comes after the key (deadline, seq). */
const afterKey = (r, deadline, seq) => r.deadline > deadline || (r.deadline === deadline && r.seq > seq);

test("a page after a key that is gone starts where it stood; NaN names no place; refusals change nothing", () => {
  const order = new Order();
  const records = Array.from({ length: 10 }, (_, i) => ({ deadline: Math.floor(i / 3), seq: i }));
  for (const r of records) order.add(r);
  assert.deepEqual(order.after(-Infinity, 0, 4), records.slice(0, 4));
  order.remove(records[4]);
  assert.equal(records[4].inOrder, false);
  assert.deepEqual(order.after(1, 4, 3), records.slice(5, 8));
  assert.deepEqual(order.after(Number.NaN, 0, 5), []);
  assert.deepEqual(order.after(3, 9, 5), []);
  assert.equal(order.head(), records[0]);
  assert.throws(() => order.add({ deadline: -0, seq: 0 }), RangeError, "-0 and 0 are one deadline");
  assert.throws(() => order.add({ deadline: Number.NaN, seq: 99 }), RangeError);
  assert.throws(() => order.add({ deadline: Infinity, seq: 99 }), RangeError);
  order.remove({ deadline: 0, seq: 1 }); // not in the order: nothing
  assert.equal(order.size, 9);
  assert.deepEqual(order.sorted(), [...records.slice(0, 4), ...records.slice(5)]);
});

test("every call against a sorted array, through run splits and drops", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const random = rng(seed);
    const pick = (n) => Math.floor(random() * n);
    const order = new Order();
    const model = [];
    let seq = 0;
    const steps = seed <= 2 ? 12_000 : 1500;
    for (let step = 0; step < steps; step++) {
      const op = random();
      if (op < 0.5 || model.length === 0) {
        // Few distinct deadlines, so that ties are common; seqs out of order.
        const r = { deadline: pick(seed <= 2 ? 200 : 20), seq: (seq++ * 7919) % 1_000_003 };
        order.add(r);
        let at = 0;
        while (at < model.length && byKey(model[at], r) < 0) at++;
        model.splice(at, 0, r);
      } else if (op < 0.75) {
        const [r] = model.splice(pick(model.length), 1);
        order.remove(r);
        order.remove(r); // twice: the second changes nothing
      } else {
        const n = 1 + pick(8);
        const key =
          random() < 0.5 && model.length > 0 ? model[pick(model.length)] : { deadline: pick(20) - 0.5, seq: pick(100) };
        assert.deepEqual(
          order.after(key.deadline, key.seq, n),
          model.filter((r) => afterKey(r, key.deadline, key.seq)).slice(0, n),
          `seed ${seed}, step ${step}: after (${key.deadline}, ${key.seq})`,
        );
      }
      assert.equal(order.size, model.length);
      assert.equal(order.head(), model[0]);
    }
    assert.deepEqual(order.sorted(), model, `seed ${seed}`);
    assert.deepEqual(order.after(-Infinity, 0, 3), model.slice(0, 3));
  }
});
