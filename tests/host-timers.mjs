// A count of the host timers a test's code arms: globalThis.setTimeout and clearTimeout
// wrapped so that every timer armed and not yet fired or cleared is in `live`. For the tests
// that hold the package to one host timer per process (tests/js/scheduler.test.mjs,
// tests/redis/many-queues.test.mjs). A test's own waits should use timers taken before the
// watch (or node:timers/promises), so that they are not counted.

/** Starts counting; `live` the timers armed now, `max` the most at once, `restore()` puts the host's back. */
export function watchHostTimers() {
  const { setTimeout: st, clearTimeout: ct } = globalThis;
  const live = new Set();
  const w = {
    live,
    max: 0,
    restore() {
      globalThis.setTimeout = st;
      globalThis.clearTimeout = ct;
    },
  };
  globalThis.setTimeout = (fn, ms, ...args) => {
    const id = st(
      (...a) => {
        live.delete(id);
        fn(...a);
      },
      ms,
      ...args,
    );
    live.add(id);
    w.max = Math.max(w.max, live.size);
    return id;
  };
  globalThis.clearTimeout = (id) => {
    live.delete(id);
    ct(id);
  };
  return w;
}
