// The errors tarry throws of its own, as classes a caller can test with `instanceof`.

/** What the methods of a closed queue or scheduler throw, and what its waiting calls reject with. */
export class ClosedError extends Error {
  /** @param {string} what the closed object, e.g. "DelayQueue" */
  constructor(what) {
    super(`the ${what} is closed`);
    this.name = "ClosedError";
  }
}

/**
 * `for await` over a queue's take(): yields what each take resolves to, and ends when one
 * rejects with ClosedError (any other rejection reaches the loop).
 * @template T
 * @param {() => Promise<T>} take
 * @returns {AsyncGenerator<T, void, unknown>}
 */
export async function* takeUntilClosed(take) {
  for (;;) {
    let got;
    try {
      got = await take();
    } catch (e) {
      if (e instanceof ClosedError) return;
      throw e;
    }
    yield got;
  }
}
