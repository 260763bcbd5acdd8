// Pausing a DurableDelayQueue: the paused flag is stored (it holds across restarts) and the
// alarm deleted with it in one transaction; resume() removes the flag and sets the alarm for
// the head in one transaction.

import { alarmAt } from "./store.js";

/**
 * Stops deliveries until resume(): deliver() hands nothing out and the alarm is deleted;
 * offers still land. Stored, so it holds across restarts. Resolves true if it was running.
 */
export async function pause(store) {
  store.refuseIfClosed();
  return store.exclusive(async () => {
    if (store.paused) return false;
    await store.storage.transaction(async (txn) => {
      await txn.put(`${store.prefix}paused`, true);
      await txn.deleteAlarm();
    });
    store.paused = true;
    store.alarm = null;
    store.tell("paused", {});
    return true;
  });
}

/** Lets deliveries run again and sets the alarm for the head. Resolves true if it was paused. */
export async function resume(store) {
  store.refuseIfClosed();
  return store.exclusive(async () => {
    if (!store.paused) return false;
    let at = store.order.head()?.deadline ?? Infinity;
    if (store.inFlight !== null) at = Math.min(at, store.inFlight.deadline);
    const alarm = at === Infinity ? null : alarmAt(at);
    await store.storage.transaction(async (txn) => {
      await txn.delete(`${store.prefix}paused`);
      if (alarm === null) await txn.deleteAlarm();
      else await txn.setAlarm(alarm);
    });
    store.paused = false;
    store.alarm = alarm;
    store.tell("resumed", {});
    return true;
  });
}
