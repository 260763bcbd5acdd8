// The module worker: the same exercise, reported to the page.
import * as tarry from "tarry-queue";
import { exercise } from "./exercise.js";

exercise(tarry).then(
  (r) => postMessage(r),
  (e) => postMessage({ error: String(e?.stack ?? e) }),
);
