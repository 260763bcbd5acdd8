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
import type { DurableEngine, DurableEngineDeadLetter, DurableEngineOfferItem, DurableEngineStats } from "./tarry.js";

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

/** What an offer does when its id names an item already present, an offer's options and offerMany()'s items: the engine contract's (tarry.d.ts). */
export type { IfExists as DurableIfExists, DurableEngineOfferOptions as DurableOfferOptions } from "./tarry.js";
export type DurableOfferItem<T = unknown> = DurableEngineOfferItem<T>;

export interface DurableOpenOptions {
  /** Prepended to the storage keys (`${prefix}item:<id>`, `${prefix}dead:<id>`, `${prefix}sched:<id>`, `${prefix}next`). Default "tarry:". */
  prefix?: string;
  /** Deliveries before an item goes to the dead letters. Default 5. */
  maxAttempts?: number;
  /** What metrics and the dashboard call the queue. Default "durable". */
  name?: string;
}

/** One delivery of an item, as deliver() hands it to the handler. */
export interface DurableJob<T = unknown> {
  readonly id: string;
  /** A copy of the value as offered (the handler's first argument). */
  readonly value: T;
  /** The epoch-ms deadline it was due at (a retry's: its retry deadline). */
  readonly deadline: number;
  /** 1 for the first delivery, 2 after one failure (or one that never finished), ... */
  readonly attempt: number;
  /** For an occurrence of a schedule, the schedule's id (then `deadline` is its due time); undefined for any other item. */
  readonly schedule: string | undefined;
}

/** A schedule's rule, options and description: one declaration for every engine (tarry.d.ts). */
export type {
  ScheduleInfo as DurableScheduleInfo,
  ScheduleOptions as DurableScheduleOptions,
  ScheduleRule as DurableScheduleRule,
} from "./tarry.js";

export interface DurableDeliverOptions {
  /** Ms before an item whose handler threw comes back: a number, or (attempt, error) => ms. Default 1000. */
  retryDelayMs?: number | ((attempt: number, error: unknown) => number);
}

/** A pending item, as toArray() shows it. */
export interface DurableItem<T = unknown> {
  id: string;
  value: T;
  /** Epoch ms. */
  deadline: number;
  /** Deliveries made so far. */
  attempt: number;
}

/** A dead letter, as the engine contract has it (tarry.d.ts): here its value and deadline are always read back. */
export interface DurableDeadLetter<T = unknown> extends DurableEngineDeadLetter<T> {
  /** A copy of the value. */
  value: T;
  /** The deadline of its last delivery, epoch ms. */
  deadline: number;
}

/**
 * The engine contract's figures (tarry.d.ts): `inFlight` is 0 or 1 (deliveries run one at a
 * time); `wakes` counts deliver() calls and `earlyWakes` those that found nothing due while
 * items were pending; the lateness figures cover the last 8192 deliveries since open().
 */
export type DurableQueueStats = DurableEngineStats;

/**
 * A delay queue in a Cloudflare Durable Object: items live in the object's storage, and its
 * one timer is the object's alarm, set for the head's deadline. It keeps the engine contract
 * (`DurableEngine`, tarry.d.ts) RedisDelayQueue keeps (string ids, ifExists, at-least-once
 * delivery with attempts, retries and dead letters, pages, pause and resume, schedules).
 * Every call either fully happens (in memory and in storage, one transaction) or changes
 * nothing; every method that returns a Promise rejects rather than throws, and after close()
 * rejects with ClosedError. Values are structured-cloned in and out (offer() rejects with a
 * TypeError for a value storage cannot hold, and a RangeError for a deadline after 2189);
 * offerMany() is one transaction; pause() is stored, so it holds across restarts; close()
 * leaves storage and the alarm as they are.
 */
export declare class DurableDelayQueue<T = unknown> {
  private constructor();
  /** Reads the queue back from storage and sets the alarm for its head; call in blockConcurrencyWhile. */
  static open<T = unknown>(storage: DurableQueueStorage, options?: DurableOpenOptions): Promise<DurableDelayQueue<T>>;
  /** Durable only, from memory: a copy of the head's value (due or not), or undefined when none is pending. */
  peek(): T | undefined;
  /** Durable only, from memory: copies of the pending items in deadline order (FIFO among ties). */
  toArray(): DurableItem<T>[];
  /**
   * Call from the object's alarm(), every time: hands each item due now to `handler`, one
   * at a time in deadline order. Returning (or resolving) is done: the item is removed.
   * Throwing brings it back `retryDelayMs` later, or after `maxAttempts` deliveries makes it
   * a dead letter. Then re-arms the alarm. Resolves to the number of deliveries; rejects only
   * when storage fails. Overlapping calls run one after another.
   */
  deliver(handler: (value: T, job: DurableJob<T>) => unknown, options?: DurableDeliverOptions): Promise<number>;
}

/** A DurableDelayQueue is an EventTarget: delivered, acked, nacked, redelivered, dead, error, paused, resumed. */
export interface DurableDelayQueue<T = unknown> extends DurableEngine<T, DurableQueueStats, DurableDeadLetter<T>> {}
