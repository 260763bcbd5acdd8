// The engine contract's cases that hold in memory too (cases.mjs, those marked inMemory: ids
// and ifExists) against DelayQueue, as users import it, under Node. A DelayQueue holds pending
// items only and hands each out once, by take(): each delivery is its item's first attempt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DelayQueue } from "tarry-queue";
import { cases, register } from "./register.mjs";

/** How long a take waits for its item before the case fails. */
const LIMIT_MS = 20_000;

test("the in-memory runner has cases to run: ifExists replace, keep and extend among them", () => {
  const names = cases.filter((c) => c.inMemory).map((c) => c.name);
  for (const mode of ["replace", "keep", "extend"])
    assert.ok(
      names.some((n) => n.includes(`ifExists "${mode}"`)),
      mode,
    );
});

register(
  async (c) => {
    const queues = [];
    const engine = {
      name: "DelayQueue (in memory)",
      memory: true,
      open: async () => {
        const q = new DelayQueue();
        queues.push(q);
        return q;
      },
      size: (q) => q.size,
      /** take() n times; ids and lateness from the `delivered` events. */
      consume: async (q, n, handler = () => {}) => {
        const delivered = [];
        const off = q.on("delivered", (d) => delivered.push(d));
        const got = [];
        try {
          for (let i = 0; i < n; i++) {
            const value = await q.take({ timeout: LIMIT_MS });
            assert.notEqual(value, undefined, `no item within ${LIMIT_MS} ms (delivery ${i + 1} of ${n})`);
            got.push({ value, at: Date.now() });
            await handler(value);
          }
          await new Promise((resolve) => setTimeout(resolve, 0)); // events are posted in a microtask
        } finally {
          off();
        }
        assert.equal(delivered.length, n);
        return got.map(({ value, at }, i) => ({
          id: delivered[i].id,
          value,
          deadline: at - delivered[i].lateness,
          attempt: 1,
          at,
        }));
      },
    };
    return {
      run: () => c.run(engine),
      dispose: async () => {
        for (const q of queues) q.close();
      },
    };
  },
  { inMemory: true },
);
