// The checks on arguments of public calls (DelayQueue, Scheduler, DurableDelayQueue,
// RedisDelayQueue): bad input gets a TypeError or RangeError that names the argument, thrown
// before anything changes. Plain JS: the Redis entry uses these too and never loads the wasm.

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
 * A queue's value: anything but null and undefined (what poll() returns for "nothing") and
 * thenables (a take() resolving with one would adopt it instead of handing it out).
 */
export function checkValue(value, name = "value") {
  if (value === undefined || value === null) {
    throw new TypeError(`${name} must not be ${value}: null and undefined are what poll() returns for "nothing"`);
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
  return value !== undefined && value !== null && thenable(value) === null;
}

/** A finite number of milliseconds. */
export function checkMs(x, name) {
  if (typeof x !== "number") throw new TypeError(`${name} must be a number of milliseconds, got ${describe(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`${name} must be a finite number of milliseconds, got ${x}`);
}

/** A handle is a number; which numbers name an item is the binding's business. */
export function checkHandle(handle, from) {
  if (typeof handle !== "number")
    throw new TypeError(`handle must be a number returned by ${from}(), got ${describe(handle)}`);
}

/** An epoch-ms number or a Date (of any realm), as a finite epoch-ms number. */
export function epochOf(deadline) {
  let epoch = deadline;
  if (typeof deadline === "object" && deadline !== null) {
    try {
      epoch = Date.prototype.getTime.call(deadline); // a Date of another realm passes too
    } catch {
      epoch = undefined;
    }
  }
  if (typeof epoch !== "number")
    throw new TypeError(`deadline must be a number of epoch milliseconds or a Date, got ${describe(deadline)}`);
  if (!Number.isFinite(epoch))
    throw new RangeError(
      `deadline must be a finite time, got ${typeof deadline === "object" ? "an invalid Date" : epoch}`,
    );
  return epoch;
}

/** An options bag: undefined or an object. */
export function options(o, name) {
  if (o === undefined) return {};
  if (o === null || typeof o !== "object" || isRevoked(o))
    throw new TypeError(`${name} must be an object, got ${describe(o)}`);
  return o;
}

export function checkBoolean(x, name) {
  if (typeof x !== "boolean") throw new TypeError(`${name} must be a boolean, got ${describe(x)}`);
}

/** A bound on a queue's size: a whole number up to `max` (what a queue holds), or Infinity. */
export function checkCapacity(capacity, max) {
  if (capacity === Infinity) return;
  if (typeof capacity !== "number") throw new TypeError(`capacity must be a number, got ${describe(capacity)}`);
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > max)
    throw new RangeError(`capacity must be a whole number from 1 to ${max}, or Infinity, got ${capacity}`);
}

/** A clock: a function returning monotonic milliseconds. */
export function checkClock(clock) {
  if (typeof clock !== "function")
    throw new TypeError(`clock must be a function returning milliseconds, got ${describe(clock)}`);
}

export function checkSignal(signal) {
  if (signal === undefined) return;
  if (
    signal === null ||
    typeof signal !== "object" ||
    isRevoked(signal) ||
    typeof signal.addEventListener !== "function" ||
    typeof signal.aborted !== "boolean"
  ) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(signal)}`);
  }
}

/** What an aborted wait rejects with: the signal's reason, or an AbortError when it has none. */
export function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}
