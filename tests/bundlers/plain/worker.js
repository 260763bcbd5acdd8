// The module worker, unbundled: an import map does not reach a worker, so it imports the
// package's browser entry by its path.
import * as tarry from "./node_modules/tarry-queue/js/web.js";
import { exercise } from "./exercise.js";

exercise(tarry).then(
  (r) => postMessage(r),
  (e) => postMessage({ error: String(e?.stack ?? e) }),
);
