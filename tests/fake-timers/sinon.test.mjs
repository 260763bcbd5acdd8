// @sinonjs/fake-timers: it fakes setTimeout, Date and performance.now(), so a queue
// follows it with no option.
import { test } from "node:test";
import FakeTimers from "@sinonjs/fake-timers";
import { takesFollowFakeTime } from "./scenario.mjs";

test("@sinonjs/fake-timers: take() follows clock.tick(), in order, never early", async () => {
  const clock = FakeTimers.install({ now: 0 });
  try {
    await takesFollowFakeTime((ms) => clock.tick(ms));
  } finally {
    clock.uninstall();
  }
});
