// The argument checks that DelayQueue and Scheduler share: bad input gets a TypeError or
// RangeError that names the argument, thrown before anything changes.

import { ClosedError } from "./errors.js";

export function describe(x) {
  if (x === null || x === undefined) return String(x);
  if (typeof x === "string") return JSON.stringify(x.length > 20 ? `${x.slice(0, 20)}…` : x);
  if (typeof x === "object" || typeof x === "function") return typeof x;
  return `${typeof x} ${String(x)}`;
}

/** A queue's value: anything but null and undefined, which poll() returns for "nothing". */
export function checkValue(value) {
  if (value === undefined || value === null) {
    throw new TypeError(`value must not be ${value}: null and undefined are what poll() returns for "nothing"`);
  }
}

/** A finite number of milliseconds. */
export function checkMs(x, name) {
  if (typeof x !== "number") throw new TypeError(`${name} must be a number of milliseconds, got ${describe(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`${name} must be a finite number of milliseconds, got ${x}`);
}

/** A handle is a number; which numbers name an item is the core's business. */
export function checkHandle(handle, from) {
  if (typeof handle !== "number")
    throw new TypeError(`handle must be a number returned by ${from}(), got ${describe(handle)}`);
}

/** An epoch-ms number or a Date, as a finite epoch-ms number. */
export function epochOf(deadline) {
  const epoch = deadline instanceof Date ? deadline.getTime() : deadline;
  if (typeof epoch !== "number")
    throw new TypeError(`deadline must be a number of epoch milliseconds or a Date, got ${describe(deadline)}`);
  if (!Number.isFinite(epoch))
    throw new RangeError(`deadline must be a finite time, got ${deadline instanceof Date ? "an invalid Date" : epoch}`);
  return epoch;
}

/** An options bag: undefined or an object. */
export function options(o, name) {
  if (o === undefined) return {};
  if (o === null || typeof o !== "object") throw new TypeError(`${name} must be an object, got ${describe(o)}`);
  return o;
}

export function checkBoolean(x, name) {
  if (typeof x !== "boolean") throw new TypeError(`${name} must be a boolean, got ${describe(x)}`);
}

export function checkSignal(signal) {
  if (signal === undefined) return;
  if (
    signal === null ||
    typeof signal !== "object" ||
    typeof signal.addEventListener !== "function" ||
    typeof signal.aborted !== "boolean"
  ) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(signal)}`);
  }
}

/** What methods of a closed queue or scheduler throw, and its waiting calls reject with. */
export function closedError(what) {
  return new ClosedError(what);
}
