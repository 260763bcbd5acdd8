// Events: every queue is an EventTarget (the runtime's own, in Node, Deno, Bun, browsers and
// workerd), and what it tells comes as CustomEvents whose `detail` carries the data:
// `queue.addEventListener("delivered", (e) => e.detail.lateness)`, or the `on` sugar, which
// returns the function that unsubscribes.
//
// Emitting must cost nothing when nobody listens, and EventTarget cannot say whether anyone
// does, so this class keeps its own count of the listeners of each type, beside the
// runtime's list: `[HEARD](type)` is one lookup, and a queue builds an event (its detail
// object, the CustomEvent) only when it is true. The count follows the runtime's rules: a
// listener added twice with the same capture flag is one, `once` listeners leave after
// their first event, and a listener added with a `signal` leaves when it aborts.

/** Where a listener's capture registration sits in its pair (its bubble one at 0). */
const CAPTURE = 1;

/** `[HEARD](type)`: whether anyone listens for `type` (cheap: ask before building an event). */
export const HEARD = Symbol("tarry.heard");
/** `[EMIT](type, detail)`: dispatches a CustomEvent now, if anyone listens. */
export const EMIT = Symbol("tarry.emit");
/** `[POST](type, detail)`: dispatches it in a microtask, after the events posted before it. */
export const POST = Symbol("tarry.post");

export class Emitter extends EventTarget {
  /** Told when the first listener of a type arrives (`on` true) or the last leaves (false). */
  #onListening;
  /** type → listener → [bubble registration, capture registration] (the function given to the runtime, or undefined). */
  #registry = new Map();
  /** type → the number of listeners registered. */
  #counts = new Map();

  /** @param {(type: string, on: boolean) => void} [onListening] */
  constructor(onListening) {
    super();
    this.#onListening = onListening;
  }

  addEventListener(type, listener, options) {
    if (listener === null || listener === undefined) return super.addEventListener(type, listener, options);
    const name = String(type);
    const capture = captureOf(options);
    const o = typeof options === "object" && options !== null ? options : {};
    const signal = o.signal;
    if (signal?.aborted) return undefined;
    let byListener = this.#registry.get(name);
    const present = byListener?.get(listener);
    if (present?.[capture ? CAPTURE : 0] !== undefined) return undefined; // a no-op, as in EventTarget
    let target = listener;
    if (o.once) {
      const forget = () => this.#forget(name, listener, capture);
      /** @this {unknown} @param {Event} event */
      target = function (event) {
        forget();
        return typeof listener === "function" ? listener.call(this, event) : listener.handleEvent(event);
      };
    }
    super.addEventListener(name, target, options);
    if (byListener === undefined) {
      byListener = new Map();
      this.#registry.set(name, byListener);
    }
    const registrations = present ?? [undefined, undefined];
    registrations[capture ? CAPTURE : 0] = target;
    byListener.set(listener, registrations);
    const n = this.#counts.get(name) ?? 0;
    this.#counts.set(name, n + 1);
    if (n === 0) this.#onListening?.(name, true);
    signal?.addEventListener("abort", () => this.#forget(name, listener, capture), { once: true });
    return undefined;
  }

  removeEventListener(type, listener, options) {
    const name = String(type);
    const capture = captureOf(options);
    const target = this.#registry.get(name)?.get(listener)?.[capture ? CAPTURE : 0];
    if (target === undefined) return super.removeEventListener(type, listener, options);
    super.removeEventListener(name, target, { capture });
    this.#forget(name, listener, capture);
    return undefined;
  }

  /**
   * Calls `listener(detail, event)` for each event of `type`; returns the function that stops
   * it. `{ once, signal }` as for addEventListener.
   * @param {string} type
   * @param {(detail: any, event: CustomEvent) => void} listener
   * @param {{ once?: boolean, signal?: AbortSignal }} [options]
   */
  on(type, listener, options) {
    if (typeof listener !== "function") {
      throw new TypeError(`listener must be a function, got ${listener === null ? "null" : typeof listener}`);
    }
    const handler = (event) => listener(event.detail, event);
    this.addEventListener(type, handler, options);
    return () => this.removeEventListener(type, handler);
  }

  /** Whether anyone listens for `type`. */
  [HEARD](type) {
    return this.#counts.has(type);
  }

  /** Dispatches a CustomEvent of `type` with `detail` now, if anyone listens. */
  [EMIT](type, detail) {
    if (this.#counts.has(type)) this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /**
   * Dispatches a CustomEvent of `type` with `detail` in a microtask, after the events posted
   * before it: for changes made inside a call, so that listeners see the queue once the call
   * is done with it, and may call it.
   */
  [POST](type, detail) {
    let posted = this.#posted;
    if (posted === null) {
      posted = this.#posted = [];
      queueMicrotask(() => this.#flush());
    }
    posted.push(type, detail);
  }

  /** Events posted and not yet dispatched: type, detail, type, detail... @type {unknown[] | null} */
  #posted = null;

  #flush() {
    const posted = /** @type {unknown[]} */ (this.#posted);
    this.#posted = null;
    for (let i = 0; i < posted.length; i += 2) this[EMIT](String(posted[i]), posted[i + 1]);
  }

  #forget(name, listener, capture) {
    const byListener = this.#registry.get(name);
    const registrations = byListener?.get(listener);
    const i = capture ? CAPTURE : 0;
    if (registrations?.[i] === undefined) return;
    registrations[i] = undefined;
    if (registrations[1 - i] === undefined) byListener.delete(listener);
    if (byListener.size === 0) this.#registry.delete(name);
    const n = this.#counts.get(name) - 1;
    if (n !== 0) {
      this.#counts.set(name, n);
      return;
    }
    this.#counts.delete(name);
    this.#onListening?.(name, false);
  }
}

function captureOf(options) {
  return typeof options === "boolean" ? options : Boolean(options?.capture);
}
