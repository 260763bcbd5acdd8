// The resolve hook bench/calls/root.mjs registers: `tarry-queue` and `tarry-queue/…` resolve
// as a self-reference from inside TARRY_ROOT's package, that is, through its own exports map.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** @type {string | undefined} */
let parentURL;

export function initialize(/** @type {{ root: string }} */ { root }) {
  parentURL = pathToFileURL(join(root, "package.json")).href;
}

export function resolve(
  /** @type {string} */ specifier,
  /** @type {{ parentURL?: string }} */ context,
  /** @type {Function} */ next,
) {
  if (parentURL && (specifier === "tarry-queue" || specifier.startsWith("tarry-queue/")))
    return next(specifier, { ...context, parentURL });
  return next(specifier, context);
}
