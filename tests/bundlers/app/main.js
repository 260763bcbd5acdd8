// The page: runs the exercise here and in a module worker, then publishes both results.
import * as tarry from "tarry-queue";
import { exercise } from "./exercise.js";
import { start } from "./start.js";

async function inWorker() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
  });
}

Promise.all([exercise(tarry, start), inWorker()]).then(
  ([page, worker]) => {
    globalThis.result = { page, worker };
  },
  (e) => {
    globalThis.result = { error: String(e?.stack ?? e) };
  },
);
