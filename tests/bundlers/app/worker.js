// The module worker: the same exercise, reported to the page.
import * as tarry from "tarry-queue";
import { exercise } from "./exercise.js";
import { start } from "./start.js";

exercise(tarry, start).then(
  (r) => postMessage(r),
  (e) => postMessage({ error: String(e?.stack ?? e) }),
);
