// The checks on arguments of public calls, for every engine (DelayQueue, Scheduler,
// DurableDelayQueue, RedisDelayQueue): bad input gets a TypeError or RangeError that names
// the argument, thrown before anything changes (a method that returns a Promise rejects
// with it instead). The rules they share are written once here: an options bag takes only
// the options its call lists, and an option set to `undefined` is absent (its default);
// `undefined` is no value, `null` is one; an id is a non-empty, well-formed string of at
// most MAX_ID_LENGTH UTF-16 code units; a deadline lies within the range of a Date; a page
// of a listing holds 1 to MAX_PAGE items, and its cursor is a string that the listing wrote.
// Plain JS: the Redis entry uses these too and never loads the wasm.

/**
 * Whether `x` is a revoked Proxy, on which every operation throws the engine's TypeError
 * (naming no argument). Array.isArray tells without running any trap of a live Proxy.
 */
export function isRevoked(x) {
  try {
    Array.isArray(x);
    return false;
  } catch {
    return true;
  }
}

/** How an argument is named in a message: its type, and its value when short. */
export function describe(x) {
  if (x === null || x === undefined) return String(x);
  if (isRevoked(x)) return "a revoked Proxy";
  if (typeof x === "string") return JSON.stringify(x.length > 20 ? `${x.slice(0, 20)}…` : x);
  if (typeof x === "object" || typeof x === "function") return typeof x;
  return `${typeof x} ${String(x)}`;
}

/**
 * Why a value would be adopted by a Promise resolved with it (it is a thenable, or reading
 * its `then` throws), or null. Reads `then` once.
 */
export function thenable(value) {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return null;
  try {
    return typeof value.then === "function" ? "it has a then method" : null;
  } catch {
    return "reading its then property throws";
  }
}

/**
 * A queue's value: anything but undefined (what poll() and a timed-out take() give for "no
 * item") and thenables (a take() resolving with one would adopt it instead of handing it
 * out). `null` is a value like any other.
 */
export function checkValue(value, name = "value") {
  if (value === undefined) {
    throw new TypeError(`${name} must not be undefined: undefined is what poll() and take() give for "no item"`);
  }
  const why = thenable(value);
  if (why !== null) {
    throw new TypeError(
      `${name} must not be a thenable (${why}): the Promise of a take() would adopt it instead of handing it out; wrap it, e.g. { ${name.replace(/\W/g, "")}: … }`,
    );
  }
}

/** Whether checkValue() would pass `value` (without building a message). */
export function isValue(value) {
  return value !== undefined && thenable(value) === null;
}

/** A finite number of milliseconds. */
export function checkMs(x, name) {
  if (typeof x !== "number") throw new TypeError(`${name} must be a number of milliseconds, got ${describe(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`${name} must be a finite number of milliseconds, got ${x}`);
}

/**
 * A handle: a whole number from 0 to 2^53 - 1, as `from`() returns them. Which of those name
 * an item is the binding's business (a number that names none is no error: the call finds
 * nothing); a number no call could have returned (1.5, -1, NaN, 2^53) is a TypeError.
 */
export function checkHandle(handle, from, alsoId = false) {
  if (typeof handle === "number" && Number.isSafeInteger(handle) && handle >= 0) return;
  const what = alsoId
    ? `a handle (a whole number returned by ${from}()) or an id (a string)`
    : `a whole number returned by ${from}()`;
  throw new TypeError(`handle must be ${what}, got ${describe(handle)}`);
}

/** The longest id, in UTF-16 code units (on every engine). */
export const MAX_ID_LENGTH = 512;

/** Unpaired surrogates, for hosts without String.prototype.isWellFormed. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An id: a non-empty, well-formed string of at most MAX_ID_LENGTH UTF-16 code units. */
export function checkId(id, name = "id") {
  if (typeof id !== "string") throw new TypeError(`${name} must be a string, got ${describe(id)}`);
  if (id === "") throw new RangeError(`${name} must not be empty`);
  if (id.length > MAX_ID_LENGTH)
    throw new RangeError(`${name} must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`);
  if (typeof id.isWellFormed === "function" ? !id.isWellFormed() : LONE_SURROGATE.test(id))
    throw new RangeError(`${name} must be well-formed Unicode (it has a lone surrogate)`);
}

/** What an offer may do with an id that is present (on every engine); the first is the default. */
export const IF_EXISTS = Object.freeze(/** @type {const} */ (["replace", "keep", "extend"]));

/**
 * An offer's `ifExists`: one of IF_EXISTS, or undefined for the default.
 * @param {unknown} ifExists
 * @param {string} name
 * @returns {"replace" | "keep" | "extend"}
 */
export function checkIfExists(ifExists, name) {
  if (ifExists === undefined) return IF_EXISTS[0];
  if (typeof ifExists !== "string") throw new TypeError(`${name} must be a string, got ${describe(ifExists)}`);
  if (!IF_EXISTS.includes(/** @type {any} */ (ifExists)))
    throw new RangeError(`${name} must be "replace", "keep" or "extend", got ${describe(ifExists)}`);
  return /** @type {"replace" | "keep" | "extend"} */ (ifExists);
}

/** An epoch-ms number or a Date (of any realm), as a finite epoch-ms number; messages name it `name`. */
export function epochOf(deadline, name = "deadline") {
  let epoch = deadline;
  if (typeof deadline === "object" && deadline !== null) {
    try {
      epoch = Date.prototype.getTime.call(deadline); // a Date of another realm passes too
    } catch {
      epoch = undefined;
    }
  }
  if (typeof epoch !== "number")
    throw new TypeError(`${name} must be a number of epoch milliseconds or a Date, got ${describe(deadline)}`);
  if (!Number.isFinite(epoch))
    throw new RangeError(
      `${name} must be a finite time, got ${typeof deadline === "object" ? "an invalid Date" : epoch}`,
    );
  return epoch;
}

/** The latest (and, negated, the earliest) epoch ms a Date can hold. */
export const MAX_TIME = 8.64e15;

/**
 * A delay counted from `now` (epoch ms), as the deadline it puts: a finite number of ms, the
 * deadline within a Date's range and no later than `latest` (an engine whose timer cannot
 * reach further: a Durable Object's alarm stops at 2189).
 * @param {unknown} delayMs
 * @param {string} name how messages name it: "delayMs", "items[2].delayMs"
 * @param {number} now
 * @param {number} [latest]
 * @returns {number}
 */
export function deadlineIn(delayMs, name, now, latest = MAX_TIME) {
  checkMs(delayMs, name);
  const deadline = now + /** @type {number} */ (delayMs);
  if (deadline > latest && latest < MAX_TIME)
    throw new RangeError(
      `${name} must put the deadline no later than ${new Date(latest).toISOString()}, got ${delayMs}`,
    );
  if (Math.abs(deadline) > MAX_TIME)
    throw new RangeError(`${name} must put the deadline within a Date's range (±${MAX_TIME} epoch ms), got ${delayMs}`);
  return deadline;
}

/**
 * A deadline (epoch ms or a Date), as epoch ms: within a Date's range, and no later than
 * `latest` (as deadlineIn()).
 * @param {unknown} deadline
 * @param {string} name
 * @param {number} [latest]
 * @returns {number}
 */
export function deadlineAt(deadline, name, latest = MAX_TIME) {
  const at = epochOf(deadline, name);
  if (at > latest && latest < MAX_TIME)
    throw new RangeError(`${name} must be no later than ${new Date(latest).toISOString()}, got ${at}`);
  if (Math.abs(at) > MAX_TIME)
    throw new RangeError(`${name} must be within a Date's range (±${MAX_TIME} epoch ms), got ${at}`);
  return at;
}

/** The earliest instant every engine holds (epoch ms): the earliest a Date holds. */
export const EARLIEST_INSTANT = -MAX_TIME;
/**
 * The latest instant every engine holds (epoch ms), 2189-01-01: workerd refuses alarms after
 * 2189 ("This API doesn't support dates after 2189"), so a time a Durable Object cannot wake
 * for is refused on every engine alike.
 */
export const LATEST_INSTANT = Date.UTC(2189, 0, 1);

/** The instant range, for messages. */
export const INSTANTS = `from ${new Date(EARLIEST_INSTANT).toISOString()} to ${new Date(LATEST_INSTANT).toISOString()}`;

/** An epoch-ms number (finite) within [EARLIEST_INSTANT, LATEST_INSTANT]; a RangeError naming `name` otherwise. */
export function checkInstant(epoch, name) {
  if (!(epoch >= EARLIEST_INSTANT && epoch <= LATEST_INSTANT))
    throw new RangeError(`${name} must be an instant ${INSTANTS} (what every engine holds), got ${epoch}`);
}

/** An epoch-ms number or a Date, as epoch ms within the instant range every engine holds. */
export function instantOf(deadline, name) {
  const epoch = epochOf(deadline, name);
  checkInstant(epoch, name);
  return epoch;
}

/**
 * An options bag: `undefined` (no options) or an object whose own enumerable string keys
 * are all options the call takes. Returns it, or `{}` for undefined. An unknown key (a
 * misspelt option, most often) is a TypeError naming it and, when one is close, the option
 * it was probably meant to be; its value does not matter. A key whose value is `undefined`
 * is an absent option: callers read options with defaults (`{ capacity = Infinity }`), so
 * it gets the default. Only the keys are read here, never a value (no getter runs).
 *
 *   options({ capcity: 2 }, "options", ["capacity", "keepAlive"], "new DelayQueue()")
 *   // TypeError: options.capcity is not an option of new DelayQueue(); did you mean capacity?
 *
 * @param {unknown} opts the caller's argument
 * @param {string} name how messages name the argument: "options", "items[2]"
 * @param {readonly string[]} [allowed] the options the call takes; when omitted, only the
 *   bag's type is checked (for a caller that checks its keys itself)
 * @param {string} [of] the call, for messages: "new DelayQueue()", "take()"
 * @returns {object}
 */
export function options(opts, name, allowed, of = "this call") {
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== "object" || isRevoked(opts))
    throw new TypeError(`${name} must be an object, got ${describe(opts)}`);
  if (allowed !== undefined) {
    for (const key of Object.keys(opts)) {
      if (!allowed.includes(key)) throw unknownOption(key, name, allowed, of);
    }
  }
  return opts;
}

function unknownOption(key, name, allowed, of) {
  const shown = /^[A-Za-z_$][\w$]*$/.test(key) ? `${name}.${key}` : `${name}[${JSON.stringify(key.slice(0, 40))}]`;
  const near = nearest(key, allowed);
  const hint =
    near !== undefined
      ? `; did you mean ${near}?`
      : allowed.length === 0
        ? ": it takes none"
        : ` (its options: ${allowed.join(", ")})`;
  return new TypeError(`${shown} is not an option of ${of}${hint}`);
}

/** The allowed name closest to `key` (same letters but for case, or at most 2 edits away), if any. */
function nearest(key, allowed) {
  const lower = key.toLowerCase();
  let best;
  let bestDistance = Math.min(2, Math.floor(key.length / 2));
  for (const name of allowed) {
    if (name.toLowerCase() === lower) return name;
    const d = editDistance(lower, name.toLowerCase(), bestDistance);
    if (d <= bestDistance && (best === undefined || d < bestDistance)) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance (insertions, deletions, substitutions, swaps), or more than `max`. */
function editDistance(a, b, max) {
  if (Math.abs(a.length - b.length) > max || a.length > 64) return max + 1;
  let prev2 = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length];
}

export function checkBoolean(x, name) {
  if (typeof x !== "boolean") throw new TypeError(`${name} must be a boolean, got ${describe(x)}`);
}

/** A bound on a queue's size: a whole number up to `max` (what a queue holds), or Infinity. */
export function checkCapacity(capacity, max, name = "options.capacity") {
  if (capacity === Infinity) return;
  if (typeof capacity !== "number") throw new TypeError(`${name} must be a number, got ${describe(capacity)}`);
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > max)
    throw new RangeError(`${name} must be a whole number from 1 to ${max}, or Infinity, got ${capacity}`);
}

/** A clock: a function returning monotonic milliseconds. */
export function checkClock(clock, name = "options.clock") {
  if (typeof clock !== "function")
    throw new TypeError(`${name} must be a function returning milliseconds, got ${describe(clock)}`);
}

/**
 * How long a wait may last: undefined (no limit) or a finite number of milliseconds, at
 * least 0. A negative or NaN timeout is a RangeError on every engine (never "wait 0 ms").
 */
export function checkTimeout(timeout, name = "options.timeout") {
  if (timeout === undefined) return;
  checkMs(timeout, name);
  if (timeout < 0) throw new RangeError(`${name} must not be negative, got ${timeout}`);
}

/** An AbortSignal, or undefined. `name`: how messages name it ("options.signal" in DelayQueue). */
export function checkSignal(signal, name = "signal") {
  if (signal === undefined) return;
  if (
    signal === null ||
    typeof signal !== "object" ||
    isRevoked(signal) ||
    typeof signal.addEventListener !== "function" ||
    typeof signal.aborted !== "boolean"
  ) {
    throw new TypeError(`${name} must be an AbortSignal, got ${describe(signal)}`);
  }
}

/** What an aborted wait rejects with: the signal's reason, or an AbortError when it has none. */
export function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

// ---- pages: what every engine's listings (pending, inFlight, deadLetters) take -------------

/** Items per page of a listing: the default and the most. */
export const PAGE = 100;
export const MAX_PAGE = 1000;

/**
 * A page's limit: a whole number from 1 to MAX_PAGE.
 * @param {unknown} limit
 * @param {string} [name]
 * @returns {number}
 */
export function checkLimit(limit, name = "options.limit") {
  if (typeof limit !== "number") throw new TypeError(`${name} must be a number, got ${describe(limit)}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw new RangeError(`${name} must be a whole number from 1 to ${MAX_PAGE}, got ${limit}`);
  return limit;
}

/**
 * A page's options `{ limit, after }` (what `of`, "pending()", takes), checked: the limit
 * (default PAGE), and the cursor read by `read` when given. `read` turns a cursor's text into
 * what the engine seeks to, and returns null (or throws) for a text that is no cursor of
 * this listing: then a RangeError says which call's `next` it must be.
 * @template K
 * @param {unknown} opts
 * @param {string} of
 * @param {(cursor: string) => K | null} read
 * @returns {{ limit: number, after: K | undefined }}
 */
export function pageOptions(opts, of, read) {
  const { limit = PAGE, after } = options(opts, "options", ["limit", "after"], of);
  checkLimit(limit, "options.limit");
  return { limit, after: after === undefined ? undefined : readCursor(after, "options.after", of, read) };
}

/**
 * A cursor, as a listing's page gave it as `next`, read by `read` (see pageOptions()).
 * @template K
 * @param {unknown} cursor
 * @param {string} name
 * @param {string} of the listing that writes these cursors: "deadLetters()"
 * @param {(cursor: string) => K | null} read
 * @returns {K}
 */
export function readCursor(cursor, name, of, read) {
  if (typeof cursor !== "string") throw new TypeError(`${name} must be a cursor (a string), got ${describe(cursor)}`);
  let key;
  try {
    key = read(cursor);
  } catch {
    key = null;
  }
  if (key === null || key === undefined)
    throw new RangeError(`${name} must be a cursor that ${of} returned as next, got ${describe(cursor)}`);
  return key;
}
