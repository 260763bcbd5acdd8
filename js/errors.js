// The errors tarry throws of its own, as classes a caller can test with `instanceof`.

/** What the methods of a closed queue or scheduler throw, and what its waiting calls reject with. */
export class ClosedError extends Error {
  /** @param {string} what the closed object, e.g. "DelayQueue" */
  constructor(what) {
    super(`the ${what} is closed`);
    this.name = "ClosedError";
  }
}
