// The page: runs the exercise here, in a module worker and in a classic worker, then
// publishes the three results.
import * as tarry from "tarry-queue";
import { exercise } from "./exercise.js";

function report(worker) {
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
  });
}

Promise.all([
  exercise(tarry),
  report(new Worker(new URL("./worker.js", import.meta.url), { type: "module" })),
  report(new Worker(new URL("./classic-worker.js", import.meta.url))),
]).then(
  ([page, module, classic]) => {
    globalThis.result = { page, module, classic };
  },
  (e) => {
    globalThis.result = { error: String(e?.stack ?? e) };
  },
);
