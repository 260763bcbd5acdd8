// Vitest's vi.useFakeTimers() fakes setTimeout, Date and performance.now(), so a queue
// follows it with no option. Run by scripts/test.sh through Vitest.
import { test, vi } from "vitest";
import { takesFollowFakeTime } from "./scenario.mjs";

test("Vitest fake timers: take() follows vi.advanceTimersByTime(), in order, never early", async () => {
  vi.useFakeTimers({ now: 0 });
  try {
    await takesFollowFakeTime((ms) => vi.advanceTimersByTime(ms));
  } finally {
    vi.useRealTimers();
  }
});
