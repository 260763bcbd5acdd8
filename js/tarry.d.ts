// Types for the npm package `tarry`.

/** A handle names one offered item. A plain integer below 2^53, never reused while its queue lives. */
export type Handle = number;

export interface DelayQueueOptions {
  /** Most items held at once; `offer()` returns null and `put()` waits when full. Default: Infinity. */
  capacity?: number;
  /** false: a waiting take() does not hold a Node or Deno process open (the timer is unref'd). Default: true. */
  keepAlive?: boolean;
}

export interface TakeOptions {
  /** Rejects the take with the signal's reason when aborted; the item stays in the queue. */
  signal?: AbortSignal;
  /** Milliseconds to wait; the take resolves undefined when they pass with nothing expired. */
  timeout?: number;
}

export interface PutOptions {
  /** Rejects the put with the signal's reason if aborted before there was room; nothing is added. */
  signal?: AbortSignal;
}

/** Figures for monitoring a queue. */
export interface DelayQueueStats {
  /** Items in the queue, expired or not. */
  size: number;
  /** take() calls waiting now. */
  takers: number;
  /** Host timers armed now: 0 or 1. */
  timersArmed: number;
  /** Host timers armed so far (each re-arm counts). */
  timerArms: number;
  /** Times the timer fired. */
  wakes: number;
  /** Times it fired before anything was due (early host timers, chained long waits) and was re-armed. */
  earlyWakes: number;
  /** Items handed to waiting takes by the timer. */
  delivered: number;
  /** Lateness of those items (ms after their deadline): median, 99th percentile, max. */
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
}

/**
 * A delay queue: items come out in deadline order (FIFO among equal deadlines) once their
 * delay has expired. One host timer per queue, armed only while a take() waits.
 */
export declare class DelayQueue<T = unknown> implements AsyncIterable<T> {
  constructor(options?: DelayQueueOptions);
  /** Items in the queue, expired or not. */
  readonly size: number;
  /** Room left before offer() returns null; Infinity when unbounded. */
  readonly remainingCapacity: number;
  /** Whether close() was called. */
  readonly closed: boolean;
  readonly stats: DelayQueueStats;
  /** Adds `value` due `delayMs` from now (negative: already expired). null when a bounded queue is full. */
  offer(value: T, delayMs: number): Handle | null;
  /**
   * Adds `values[i]` due `delays[i]` ms from now (or all due `delays` ms when one number),
   * with one clock reading for the batch. Throws, adding nothing, on a bad value or delay
   * or when the batch does not fit.
   */
  offerMany(values: readonly T[], delays: number | readonly number[] | Float64Array): Handle[];
  /** Like offer(), but throws a RangeError when full. */
  add(value: T, delayMs: number): Handle;
  /** Adds `value` due at a wall-clock time (epoch ms or Date), converted once to the monotonic clock. */
  offerAt(value: T, deadline: number | Date): Handle | null;
  /** Adds `value`, waiting for room when bounded; the delay counts from the call. */
  put(value: T, delayMs: number, options?: PutOptions): Promise<Handle>;
  /** The expired head, removed, or undefined. */
  poll(): T | undefined;
  /** The next expired item when it expires; undefined on timeout; rejects on abort or close. */
  take(options?: TakeOptions): Promise<T | undefined>;
  /** The head, expired or not. */
  peek(): T | undefined;
  /** The head, expired or not; throws a RangeError when empty. */
  element(): T;
  /** Removes an item by handle and returns it; undefined for a stale or unknown handle. O(log n). */
  cancel(handle: Handle): T | undefined;
  /** Moves an item's deadline to `delayMs` from now; false for a stale or unknown handle. O(log n). */
  reschedule(handle: Handle, delayMs: number): boolean;
  /** Milliseconds until the item is due (negative when overdue); undefined for a stale or unknown handle. */
  delayOf(handle: Handle): number | undefined;
  /** Removes and returns up to `max` expired items, in order. */
  drain(max?: number): T[];
  /** Removes every item; handles given out so far stay stale. */
  clear(): void;
  /** All items in deadline order, without removing them. */
  toArray(): T[];
  /** Hands every overdue item to waiting takes now, without waiting for the (maybe throttled) timer. */
  flush(): void;
  /** Rejects waiting takes and puts, disarms the timer, frees the wasm memory. */
  close(): void;
  [Symbol.dispose](): void;
  /** `for await (const item of queue)`: items as they expire, until close(). */
  [Symbol.asyncIterator](): AsyncIterator<T>;
}
