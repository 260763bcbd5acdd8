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
import type { ScheduleInfo, ScheduleOptions, ScheduleRule } from "./tarry.js";
import type { DurableEngineEvents, IfExists, ItemInfo, Page, PageOptions, QueueEvents } from "./tarry.js";

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

/** What an offer does when its id names an item already present (pending, in flight or dead): the IfExists of every engine. */
export type { IfExists as DurableIfExists } from "./tarry.js";

export interface DurableOfferOptions {
  /** The item's id: a non-empty, well-formed string of at most 512 code units. Default: 22 random base64url characters (128 bits). */
  id?: string;
  /**
   * "replace" (default): a new item in its place (new value and deadline, attempts from 0).
   * "keep": the item present stays as it is. "extend": a pending item takes the later of
   * the two deadlines and the new value, keeping its attempts; an item in flight or dead is
   * replaced.
   */
  ifExists?: IfExists;
}

export type DurableOfferItem<T = unknown> = { value: T; id?: string; ifExists?: IfExists } & (
  | { delayMs: number; deadline?: undefined }
  | { deadline: number | Date; delayMs?: undefined }
);

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

/** A dead letter: an item whose last allowed delivery failed. */
export interface DurableDeadLetter<T = unknown> {
  id: string;
  state: "dead";
  value: T;
  /** The deadline of its last delivery, epoch ms. */
  deadline: number;
  attempt: number;
  /** The error its handler threw: its name and message, at most 1,000 characters. */
  reason: string;
  /** That error's stack, when it had one (at most 8,000 characters). */
  stack?: string;
  /** When it died, epoch ms. */
  diedAt: number;
}

export interface DurableQueueStats {
  /** Items waiting for their deadline, or due and not yet handed out. */
  pending: number;
  /** Items whose handler runs (0 or 1). */
  inFlight: number;
  dead: number;
  /** Whether pause() stopped deliveries. */
  paused: boolean;
  /** Ms until the head's deadline (negative when overdue), or undefined when none is pending. */
  headDelay: number | undefined;
  /** Since open(): deliver() calls, those that found nothing due while items were pending, deliveries, and deliveries after the first. */
  wakes: number;
  earlyWakes: number;
  delivered: number;
  redelivered: number;
  /** Ms between deadline and delivery, over the last 8192 deliveries since open(). */
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
}

/**
 * A delay queue in a Cloudflare Durable Object: items live in the object's storage, and its
 * one timer is the object's alarm, set for the head's deadline. It keeps the contract
 * RedisDelayQueue keeps (string ids, ifExists, at-least-once delivery with attempts, retries
 * and dead letters). Every call either fully happens (in memory and in storage, one
 * transaction) or changes nothing; every method that returns a Promise rejects rather than
 * throws, and after close() rejects with ClosedError. Values are structured-cloned in and out.
 */
export declare class DurableDelayQueue<T = unknown> {
  private constructor();
  /** The name open() was given (default "durable"): what metrics and the dashboard show. */
  readonly name: string;
  /** Reads the queue back from storage and sets the alarm for its head; call in blockConcurrencyWhile. */
  static open<T = unknown>(storage: DurableQueueStorage, options?: DurableOpenOptions): Promise<DurableDelayQueue<T>>;
  /**
   * Adds `value` due `delayMs` from now; resolves to its id once stored. Rejects with a
   * TypeError for a value storage cannot hold (functions, Promises...) and a RangeError for a
   * deadline after 2189.
   */
  offer(value: T, delayMs: number, options?: DurableOfferOptions): Promise<string>;
  /** Adds `value` due at `deadline` (epoch ms or a Date); resolves to its id once stored. */
  offerAt(value: T, deadline: number | Date, options?: DurableOfferOptions): Promise<string>;
  /** Adds every item in one transaction (all or none), in order; resolves to their ids. */
  offerMany(items: DurableOfferItem<T>[]): Promise<string[]>;
  /** Removes a pending item: true if it was pending (not in flight, not dead). */
  cancel(id: string): Promise<boolean>;
  /** A new delay for a pending item, counted from this call: true if it was pending. */
  reschedule(id: string, delayMs: number): Promise<boolean>;
  /** Ms until a pending item's deadline (negative when overdue), or undefined. */
  delayOf(id: string): Promise<number | undefined>;
  /** The number of pending items. */
  size(): Promise<number>;
  stats(): Promise<DurableQueueStats>;
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
  /** What the queue holds under `id` (a copy), or undefined. */
  get(id: string): Promise<ItemInfo<T> | undefined>;
  /** A page of pending items in deadline order (FIFO among ties). O(log n + limit) whatever the page. */
  pending(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** The item whose handler runs, as a page (at most one: deliveries run one at a time). */
  inFlight(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** Stops deliveries (stored: it holds across restarts); offers still land. True if it was running. */
  pause(): Promise<boolean>;
  /** Lets deliveries run again and sets the alarm. True if it was paused. */
  resume(): Promise<boolean>;
  /** A page of dead letters in order of death; pass `next` back as `after` (undefined: the last page). Limit 1-1000, default 100. */
  deadLetters(options?: {
    limit?: number;
    after?: string;
  }): Promise<{ items: DurableDeadLetter<T>[]; next: string | undefined }>;
  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. */
  retryDead(id: string): Promise<boolean>;
  /** Removes a dead letter: true if it was dead. */
  deleteDead(id: string): Promise<boolean>;
  /** Removes the dead letters that died at least `olderThan` ms ago (default 0: all); resolves to how many. */
  purgeDead(options?: { olderThan?: number }): Promise<number>;
  /**
   * Creates the schedule `id`, or updates it (its chain goes on when its rule is the same):
   * each occurrence is an item with `value`, delivered like any other, with `job.schedule` =
   * `id` and `job.deadline` = its due time. Resolves with the schedule.
   */
  schedule(id: string, rule: ScheduleRule, value: T, options?: ScheduleOptions): Promise<ScheduleInfo<T>>;
  /** Removes a schedule and its pending occurrence (a run in flight finishes): true if there was one. */
  unschedule(id: string): Promise<boolean>;
  /** Every schedule, by id. */
  schedules(): Promise<ScheduleInfo<T>[]>;
  /** Refuses later calls; resolves when the calls and deliveries already made have finished. Storage and alarm stay. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A DurableDelayQueue is an EventTarget: delivered, acked, nacked, redelivered, dead, error, paused, resumed. */
// biome-ignore lint/correctness/noUnusedVariables: merged with the class, whose type parameters it must repeat
export interface DurableDelayQueue<T = unknown> extends QueueEvents<DurableEngineEvents> {}
