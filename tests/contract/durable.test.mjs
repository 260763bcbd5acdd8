// The engine contract (cases.mjs) against DurableDelayQueue under Node, on the fake Durable
// Object storage (tools/durable-storage.mjs), whose alarm is run here as workerd runs it: on
// a real timer, one alarm() at a time, again after a failure. tests/contract/workerd.test.mjs
// runs the same cases in real workerd.
import { setTimeout as sleep } from "node:timers/promises";
import "../../js/node.js";
import { DurableDelayQueue } from "../../js/durable/queue.js";
import { FakeStorage } from "../../tools/durable-storage.mjs";
import { DurableHost } from "./durable-engine.mjs";
import { register } from "./register.mjs";

/** Runs the storage's alarm as workerd does until stop() (which resolves once the running alarm() has returned). */
function runAlarms(storage, host) {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = storage.alarm;
      if (at !== null && at <= Date.now()) {
        try {
          await storage.fire(() => host.alarm());
        } catch {
          await sleep(50); // the runtime retries a failed alarm (after 2 s, doubling; sooner here)
        }
      } else {
        await sleep(at === null ? 5 : Math.min(5, Math.max(1, at - Date.now())));
      }
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

register(async (c) => {
  const storage = new FakeStorage();
  const host = new DurableHost(DurableDelayQueue, storage, async () => storage.dump());
  const stop = runAlarms(storage, host);
  const engine = host.engine("DurableDelayQueue (fake storage)");
  return {
    run: () => c.run(engine),
    dispose: async () => {
      await host.close();
      await stop();
    },
  };
});
