// The server's clock as a process knows it (js/engine/clock.js), on made-up readings: a stamp is
// never before the server's time at the call, across a suspend of the monotonic clock whose
// length Date.now()'s whole ms blur by up to 1 ms; and without a suspend, the rounding of two
// readings adds nothing to a stamp.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerClock } from "../../js/engine/clock.js";
import { rng } from "../../bench/rng.mjs";

/**
 * A process whose monotonic clock (`local`) stood still for `suspend` ms at local time 1000,
 * and a server whose clock is the true wall clock: `offset` ahead of the monotonic clock before
 * the suspend. Readings are as moment() makes them: Date.now() counts whole ms.
 */
function world(offset, suspend) {
  const wall = (local) => local + offset + (local >= 1000 ? suspend : 0);
  return {
    moment: (local) => ({ at: local, lead: Math.floor(wall(local)) - local }),
    server: wall,
  };
}

test("a stamp after a suspend of the monotonic clock is never before the server's time at the call", () => {
  const next = rng(31);
  let closest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 20_000; i++) {
    const offset = 1.7e12 + next() * 1000; // any fraction of a ms
    const suspend = 2 + next() * 5000; // a machine's sleep, a stopped test clock
    const w = world(offset, suspend);
    const clock = new ServerClock();
    // One reply before the suspend: sent at 500, read by the server 0.05 ms later, back at 500.2.
    const sent = 500 + next();
    clock.sample(w.moment(sent), w.server(sent + 0.05), sent + 0.2);
    const at = 1000 + next() * 100; // a call after it
    const stamp = Number(clock.stamp(w.moment(at)));
    const early = w.server(at) - stamp;
    assert.ok(
      early <= 0,
      `stamp ${early.toFixed(3)} ms before the server's time (offset ${offset}, suspend ${suspend})`,
    );
    closest = Math.min(closest, -early);
  }
  assert.ok(closest < 1.2, `the stamps stay near the truth (closest ${closest.toFixed(3)} ms after it)`);
});

test("without a suspend, a stamp is the call's time plus the upper bound: the readings' rounding adds nothing", () => {
  const next = rng(32);
  for (let i = 0; i < 5000; i++) {
    const offset = 1.7e12 + next() * 1000;
    const w = world(offset, 0);
    const clock = new ServerClock();
    const sent = 500 + next();
    clock.sample(w.moment(sent), w.server(sent + 0.05), sent + 0.2);
    const at = 1000 + next() * 100;
    const stamp = Number(clock.stamp(w.moment(at)));
    const expected = at + clock.upper(at);
    assert.ok(Math.abs(stamp - expected) < 0.001, `stamp ${stamp - expected} ms from at + upper`);
    assert.ok(stamp >= w.server(at), "never before the server's time");
  }
});
