// Jest's modern fake timers fake setTimeout, Date and performance.now(), so a queue
// follows them with no option. Run by scripts/test.sh through Jest (ESM: --experimental-vm-modules).
import { jest, test } from "@jest/globals";
import { takesFollowFakeTime } from "./scenario.mjs";

test("Jest modern fake timers: take() follows jest.advanceTimersByTime(), in order, never early", async () => {
  jest.useFakeTimers({ now: 0 });
  try {
    await takesFollowFakeTime((ms) => jest.advanceTimersByTime(ms));
  } finally {
    jest.useRealTimers();
  }
});
