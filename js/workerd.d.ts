// Types of the `workerd` entry (js/workerd.js): everything the other entries export, and
// DurableDelayQueue, which only Cloudflare Workers have. TypeScript picks this file for
// "tarry-queue" when the project's tsconfig says `"customConditions": ["workerd"]`, as
// wrangler's bundler resolves it.

/**
 * `tarry-queue` as Cloudflare Workers resolve it (the `workerd` export condition): everything
 * the other entries export, and `DurableDelayQueue`, a delay queue kept in a Durable Object's
 * storage whose one timer is the object's alarm. TypeScript picks these types when a
 * project's tsconfig has `"customConditions": ["workerd"]`.
 *
 * @module workerd
 */

export * from "./tarry.js";

/** The writes DurableDelayQueue makes inside one `storage.transaction()`: all or none. */
export interface DurableQueueTransaction {
  put(entries: Record<string, unknown>): Promise<void>;
  delete(key: string): Promise<boolean>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** The part of a Durable Object's `ctx.storage` that DurableDelayQueue uses. */
export interface DurableQueueStorage {
  get(key: string): Promise<unknown>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
  transaction<R>(closure: (txn: DurableQueueTransaction) => Promise<R>): Promise<R>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** An item of a DurableDelayQueue: its id (stable across restarts), value and epoch-ms deadline. */
export interface DurableItem<T = unknown> {
  id: number;
  value: T;
  deadline: number;
}

/**
 * A delay queue in a Cloudflare Durable Object: items live in the object's storage, and its
 * one timer is the object's alarm, set for the head's deadline. Every call either fully
 * happens (in memory and in storage, one transaction) or changes nothing; every method that
 * returns a Promise rejects rather than throws. Values are structured-cloned in and out.
 */
export declare class DurableDelayQueue<T = unknown> {
  private constructor();
  /** Reads the queue back from storage and sets the alarm for its head; call in blockConcurrencyWhile. */
  static open<T = unknown>(storage: DurableQueueStorage, options?: { prefix?: string }): Promise<DurableDelayQueue<T>>;
  /** Items in the queue, due or not (read from memory, which holds what storage holds). */
  readonly size: number;
  /**
   * Adds `value` due `delayMs` from now; resolves to its id once stored. Rejects with a
   * TypeError for a value storage cannot hold (functions, thenables...).
   */
  offer(value: T, delayMs: number): Promise<number>;
  /** Adds `value` due at `deadline` (epoch ms or Date; RangeError after 2189-01-01); resolves to its id once stored. */
  offerAt(value: T, deadline: number | Date): Promise<number>;
  /** Removes an item; its value, or undefined when the id names none. */
  cancel(id: number): Promise<T | undefined>;
  /** Moves an item to `delayMs` from now; false when the id names none. */
  reschedule(id: number, delayMs: number): Promise<boolean>;
  /** A copy of the head's value (due or not), or undefined when empty. */
  peek(): T | undefined;
  /** The epoch-ms deadline of an item, or undefined; throws a TypeError when `id` is not a non-negative integer. */
  deadlineOf(id: number): number | undefined;
  /** Copies of every item in deadline order (FIFO among ties). */
  toArray(): DurableItem<T>[];
  /**
   * Call from the object's alarm(): hands each item due now to `callback` in deadline order,
   * removing it from storage once the callback has returned or resolved; then re-arms the alarm.
   * Overlapping calls run one after another. If a callback throws, the item stays at the head,
   * the alarm is set for a retry (2 s, doubling, at most 5 min) and deliver() rejects: delivery
   * is at least once.
   */
  deliver(callback: (value: T, item: { id: number; deadline: number }) => unknown): Promise<number>;
}
