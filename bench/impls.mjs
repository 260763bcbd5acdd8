// The implementations compared, by id. Each loads lazily so that a child process measuring
// one of them loads nothing of the others (memory is measured per process).

export const IMPLS = {
  tarry: {
    label: "tarry",
    about:
      'tarry\'s DelayQueue, imported as a user would (`import { DelayQueue, init } from "tarry-queue"`; `await init()`, at once outside browsers)',
    load: async () => {
      const { DelayQueue, init } = await import("tarry-queue");
      await init();
      return () => new DelayQueue();
    },
  },
  "js-heap": {
    label: "plain-JS heap",
    about:
      "indexed 4-ary heap in typed arrays, O(log n) cancel by handle, one re-armed timer (bench/peers/indexed-heap.mjs)",
    load: async () => {
      const { HeapDelayQueue } = await import("./peers/indexed-heap.mjs");
      return () => new HeapDelayQueue();
    },
  },
  tinyqueue: {
    label: "tinyqueue",
    about:
      "npm tinyqueue 3 (binary heap of objects), lazy-deletion cancel, one re-armed timer (bench/peers/tinyqueue.mjs)",
    load: async () => {
      const { TinyQueueDelayQueue } = await import("./peers/tinyqueue.mjs");
      return () => new TinyQueueDelayQueue();
    },
  },
  setTimeout: {
    label: "setTimeout/item",
    about: "one setTimeout per item, a Map id -> timer for cancel (bench/peers/timeouts.mjs)",
    load: async () => {
      const { TimeoutDelayQueue } = await import("./peers/timeouts.mjs");
      return () => new TimeoutDelayQueue();
    },
  },
};

export const JS_IMPLS = Object.keys(IMPLS);
