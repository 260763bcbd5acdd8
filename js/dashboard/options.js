// The dashboard's arguments, checked: the queues (by name, each with the methods the page
// reads) and the options, with messages that name what is wrong.

import { hostCheck } from "./hosts.js";

/** What the page needs of an engine. */
const READS = ["stats", "get", "pending", "inFlight", "deadLetters"];

export function queuesByName(queues) {
  const map = new Map();
  if (queues === null || typeof queues !== "object") {
    throw new TypeError("queues must be a queue, an array of queues or an object of queues by name");
  }
  const isQueue = (q) => q !== null && typeof q === "object" && typeof q.stats === "function";
  const entries = isQueue(queues)
    ? [[nameOf(queues, 0), queues]]
    : Array.isArray(queues)
      ? queues.map((q, i) => [nameOf(q, i), q])
      : Object.entries(queues);
  for (const [name, q] of entries) {
    if (!isQueue(q)) throw new TypeError(`queues: ${JSON.stringify(name)} is not a queue (it has no stats())`);
    const missing = READS.filter((m) => typeof q[m] !== "function");
    if (missing.length > 0) {
      throw new TypeError(`queues: ${JSON.stringify(name)} lacks ${missing.join(", ")}, which the dashboard reads`);
    }
    if (map.has(name)) throw new TypeError(`queues: two queues are named ${JSON.stringify(name)}`);
    map.set(name, q);
  }
  if (map.size === 0) throw new TypeError("queues: give at least one queue");
  return map;
}

function nameOf(q, i) {
  return typeof q?.name === "string" && q.name !== "" ? q.name : `queue-${i + 1}`;
}

export function checkOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
  const known = ["token", "auth", "values", "basePath", "origins", "allowedHosts", "onerror", "title"];
  for (const k of Object.keys(options)) {
    if (!known.includes(k))
      throw new TypeError(`options.${k} is not an option of dashboard() (its options: ${known.join(", ")})`);
  }
  const {
    token,
    auth,
    values = false,
    basePath = "",
    origins = [],
    allowedHosts = [],
    onerror = logError,
    title = "tarry",
  } = options;
  if (token !== undefined && (typeof token !== "string" || token.length < 8)) {
    throw new TypeError("options.token must be a string of at least 8 characters");
  }
  if (auth !== undefined && typeof auth !== "function") throw new TypeError("options.auth must be a function");
  if (typeof values !== "boolean") throw new TypeError("options.values must be a boolean");
  if (typeof basePath !== "string" || (basePath !== "" && (!basePath.startsWith("/") || basePath.endsWith("/")))) {
    throw new TypeError('options.basePath must be "" or a path like "/tarry" (no trailing slash)');
  }
  if (!Array.isArray(origins) || origins.some((x) => typeof x !== "string")) {
    throw new TypeError("options.origins must be an array of origins (strings)");
  }
  if (typeof title !== "string") throw new TypeError("options.title must be a string");
  if (typeof onerror !== "function") throw new TypeError("options.onerror must be a function");
  const hostAllowed = hostCheck(allowedHosts);
  return { token, auth, values, basePath, origins: origins.map((x) => new URL(x).origin), hostAllowed, onerror, title };
}

/** The default onerror: the server's log, one line with the error's id. */
function logError(error, id) {
  console.error(`tarry dashboard: internal error ${id}:`, error);
}
