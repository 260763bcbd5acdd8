// Types of the `workerd` entry (js/workerd.js): everything the other entries export, and
// DurableDelayQueue, which only Cloudflare Workers have. TypeScript picks this file for
// "tarry-queue" when the project's tsconfig says `"customConditions": ["workerd"]`, as
// wrangler's bundler resolves it.

export * from "./tarry.js";

/** The part of a Durable Object's `ctx.storage` that DurableDelayQueue uses. */
export interface DurableQueueStorage {
  get(key: string): Promise<unknown>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix: string }): Promise<Map<string, unknown>>;
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
 * one timer is the object's alarm, set for the head's deadline.
 */
export declare class DurableDelayQueue<T = unknown> {
  private constructor();
  /** Reads the queue back from storage and sets the alarm for its head; call in blockConcurrencyWhile. */
  static open<T = unknown>(storage: DurableQueueStorage, options?: { prefix?: string }): Promise<DurableDelayQueue<T>>;
  readonly size: number;
  /** Adds `value` due `delayMs` from now; resolves to its id once stored. */
  offer(value: T, delayMs: number): Promise<number>;
  /** Adds `value` due at `deadline` (epoch ms or Date); resolves to its id once stored. */
  offerAt(value: T, deadline: number | Date): Promise<number>;
  /** Removes an item; its value, or undefined when the id names none. */
  cancel(id: number): Promise<T | undefined>;
  /** Moves an item to `delayMs` from now; false when the id names none. */
  reschedule(id: number, delayMs: number): Promise<boolean>;
  peek(): T | undefined;
  deadlineOf(id: number): number | undefined;
  toArray(): DurableItem<T>[];
  /**
   * Call from the object's alarm(): hands each item due now to `callback` in deadline order,
   * removing it from storage once the callback has returned or resolved; then re-arms the alarm.
   */
  deliver(callback: (value: T, item: { id: number; deadline: number }) => unknown): Promise<number>;
}
