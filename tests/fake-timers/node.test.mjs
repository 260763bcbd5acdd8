// node:test's mock.timers fakes setTimeout and Date but not performance.now(): a queue
// follows it when handed `clock: () => Date.now()`.
import { test } from "node:test";
import { takesFollowFakeTime } from "./scenario.mjs";

test("node:test mock.timers: take() follows mock.timers.tick() with { clock: () => Date.now() }", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  await takesFollowFakeTime((ms) => t.mock.timers.tick(ms), { clock: () => Date.now() });
});
