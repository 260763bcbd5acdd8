// Types of tarry-queue/redis: a delay queue on Redis shared by many processes.

/**
 * `tarry-queue/redis`: a delay queue in Redis (≥ 7) or Redis Cluster, shared by many
 * processes. Redis decides time, every change is one atomic Lua script, and a delivered item
 * is leased to its consumer until it is acked, so a consumer that dies loses nothing. Needs
 * the optional peer dependency `ioredis`.
 *
 * @module tarry-queue/redis
 */

import type { ScheduleInfo, ScheduleOptions, ScheduleRule } from "./tarry.js";
import type { AbortSignalLike, DurableEngineEvents, ItemInfo, Page, PageOptions, QueueEvents } from "./tarry.js";

/** JSON data: what an item's value may be. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * JSON data of the shape `T`, for the constraint of an item type: `T extends Jsonable<T>`.
 * Unlike `T extends Json` it takes interfaces (`interface Order { ... }`), which have no
 * index signature, and it refuses what is not JSON data anywhere inside (a function or
 * method, a Date, a Map, undefined, a bigint): what the queue refuses at run time.
 * Optional properties are allowed (absent, as JSON has them). A mapped type, not a
 * conditional one on `T`: TypeScript takes the latter for a circular constraint.
 */
export type Jsonable<T> =
  | ({ [K in keyof T]: JsonableProperty<T[K]> } & (string | number | boolean | object) & { call?: never })
  | null;
/** A property of JSON data: JSON itself, or an object whose properties are (an interface). */
export type JsonableProperty<V> = V extends Json
  ? V
  : V extends (...args: never[]) => unknown
    ? never
    : V extends object
      ? Jsonable<V>
      : never;

export interface RedisDelayQueueOptions {
  /**
   * A redis:// URL, ioredis options, or an ioredis `Redis` or `Cluster` instance (the queue
   * then also opens a `duplicate()` of it for pub/sub). Default "redis://127.0.0.1:6379".
   */
  redis?: string | object;
  /** The queue's name: every process that opens it shares its items. No braces. */
  name: string;
  /** Prepended to the queue's keys, which are `${prefix}{${name}}:...`. Default "tarry:". */
  prefix?: string;
  /**
   * The hash tags (so, on a Redis Cluster, the primaries) the queue's items are spread over,
   * 1 to 64: an id always goes to the same one. Default 1, the keys under `{name}`. A queue
   * opened with another number than it was created with refuses every call. See
   * docs/redis.md#one-queue-over-several-shards.
   */
  shards?: number;
  /** Ms a delivered item stays leased to its consumer before it comes back. Default 5000. */
  visibilityTimeout?: number;
  /** Deliveries before an item goes to the dead letters. Default 5. */
  maxAttempts?: number;
  /** Ms between the checks that cover a missed pub/sub message. Default 5000. */
  safetyInterval?: number;
  /** How far back (ms) the server accepts a call's stamped time. Default 1000. */
  clockTolerance?: number;
  /**
   * Ms within which every call settles: a call that found no connection by then rejects
   * (never sent), one sent and not answered rejects saying it may or may not have taken
   * effect. Default 5000.
   */
  commandTimeout?: number;
  /**
   * Replicas that must have each offer before `offer()`, `offerAt()` and `offerMany()` resolve
   * (Redis `WAIT` after each offer script), and how long (ms) to wait for them: default 1000,
   * less than the command timeout. When fewer confirm in time the call rejects; the item is
   * stored on the primary then. Not with a Redis Cluster client. Default: none (an offer
   * resolves once the primary has it).
   */
  waitForReplicas?: { count: number; timeout?: number };
  /** Errors no call can report (background wake-ups, lease extension, connection errors). Default: console.error. */
  onerror?: (error: unknown) => void;
  /**
   * The queue's events are those of every process (each once, in the order Redis ran them,
   * read from a capped stream that the scripts fill while some process observes), instead
   * of this process's own. Default false.
   */
  observe?: boolean;
}

/** What an offer does when its id names an item already present (pending, in flight or dead). */
export type IfExists = "replace" | "keep" | "extend";

export interface OfferOptions {
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

export type OfferItem<T extends Jsonable<T> = Json> = { value: T; id?: string; ifExists?: IfExists } & (
  | { delayMs: number; deadline?: undefined }
  | { deadline: number | Date; delayMs?: undefined }
);

/** One delivery of an item, leased to this process until ack(), nack() or the lease runs out. */
export interface RedisJob<T extends Jsonable<T> = Json> {
  readonly id: string;
  readonly value: T;
  /** The deadline it was due at: epoch ms by the server's clock. */
  readonly deadline: number;
  /** 1 for the first delivery, 2 after one nack or expired lease, ... */
  readonly attempt: number;
  /** For an occurrence of a schedule, the schedule's id (then `deadline` is its due time); undefined for any other item. */
  readonly schedule: string | undefined;
  /** Done: the item is removed. False if this delivery had lost its lease (then nothing changes). */
  ack(): Promise<boolean>;
  /** Not done: back after delayMs (default 0), or to the dead letters after the last attempt. False if the lease was lost. */
  nack(options?: { delayMs?: number; reason?: unknown }): Promise<boolean>;
  /** Keeps the lease ms more from now (default: visibilityTimeout). False if it was lost. */
  extend(ms?: number): Promise<boolean>;
}

/** A schedule's rule, options and description: one declaration for every engine (tarry.d.ts). */
export type { ScheduleInfo, ScheduleOptions as RedisScheduleOptions, ScheduleRule } from "./tarry.js";

export interface DeadLetter<T extends Jsonable<T> = Json> {
  id: string;
  state: "dead";
  /** The value, or undefined when it could not be read (then `raw` holds the text). */
  value: T | undefined;
  attempt: number;
  deadline: number | undefined;
  /** What the handler threw: an Error's name and message, or the text nack() was given (at most 1,000 characters). */
  reason: string;
  /** The Error's stack, when the reason came from one (at most 8,000 characters). */
  stack?: string;
  /** When it was dead-lettered, epoch ms by the server's clock. */
  diedAt: number;
  raw?: string;
}

export interface RedisQueueStats {
  /** Items waiting for their deadline, or due and not yet taken. */
  pending: number;
  /** Items delivered and not yet acked. */
  inFlight: number;
  dead: number;
  /** Ms until the head's deadline (negative when overdue), or undefined when none is pending. */
  headDelay: number | undefined;
  /** This process: waiting take() calls. */
  takers: number;
  /** This process: its one timer, armed (1) or not (0). */
  timersArmed: number;
  timerArms: number;
  /** This process: runs of the take script (lease expiry and transfer). */
  wakes: number;
  /** This process: timer firings that found nothing to do yet (a host timer fired early). */
  earlyWakes: number;
  /** This process: head messages received. */
  messages: number;
  delivered: number;
  redelivered: number;
  /** Items whose take left (aborted, timed out) while the script handing them out ran: put back. */
  released: number;
  /**
   * Server time at transfer minus deadline, ms, over this process's deliveries: median,
   * 99th percentile, max, from the same histogram (about 3% precision) as DelayQueue's stats.
   */
  latenessP50: number;
  latenessP99: number;
  latenessMax: number;
  /** Whether pause() stopped deliveries (for every process). */
  paused: boolean;
  /** Every process's figures, kept in Redis: deliveries and outcomes, and their lateness (ms). */
  all: {
    delivered: number;
    acked: number;
    nacked: number;
    /** Leases that expired, their items back in the queue. */
    redelivered: number;
    dead: number;
    latenessP50: number;
    latenessP99: number;
    latenessMax: number;
  };
}

export interface RedisWorker {
  /** Stops taking items and resolves when the running handlers have finished (and acked). */
  close(): Promise<void>;
}

/**
 * A delay queue in Redis: items named by string ids, due by the server's clock, handed out in
 * deadline order (FIFO among ties) to one consumer at a time, at least once.
 */
export declare class RedisDelayQueue<T extends Jsonable<T> = Json> {
  constructor(options: RedisDelayQueueOptions);
  /** The queue's keys (all under the hash tag {name}) and its pub/sub channel. */
  readonly keys: {
    items: string;
    pending: string;
    leased: string;
    dead: string;
    seq: string;
    reasons: string;
    meta: string;
    events: string;
    observed: string;
    schedules: string;
    channel: string;
  };
  /** The queue's name. */
  readonly name: string;
  /** Offers value due delayMs after this call; resolves with its id once Redis has it. */
  offer(value: T, delayMs: number, options?: OfferOptions): Promise<string>;
  /** Offers value due at a wall-clock time, as the server's clock tells it. */
  offerAt(value: T, deadline: number | Date, options?: OfferOptions): Promise<string>;
  /** Checks every item, then offers them (in atomic scripts of up to 500 items). */
  offerMany(items: OfferItem<T>[]): Promise<string[]>;
  /** Removes a pending item: true if it was pending. */
  cancel(id: string): Promise<boolean>;
  /** A new delay for a pending item, counted from this call: true if it was pending. */
  reschedule(id: string, delayMs: number): Promise<boolean>;
  /** Ms until a pending item's deadline by the server's clock, or undefined. */
  delayOf(id: string): Promise<number | undefined>;
  /** The number of pending items. */
  size(): Promise<number>;
  /** Counts by state from Redis, and this process's timer and delivery figures. */
  stats(): Promise<RedisQueueStats>;
  /** The next due item, leased to this process. With timeout it resolves undefined when that passes. */
  take(options?: { signal?: AbortSignalLike; timeout?: number }): Promise<RedisJob<T> | undefined>;
  /** `for await (const job of queue)`: takes jobs as they come due, until close(). */
  [Symbol.asyncIterator](): AsyncIterator<RedisJob<T>>;
  /** Runs handler for each due item, acks on success, nacks (retry after retryDelayMs) on a throw. */
  process(
    handler: (value: T, job: RedisJob<T>) => unknown,
    options?: { concurrency?: number; retryDelayMs?: number | ((attempt: number, error: unknown) => number) },
  ): RedisWorker;
  /**
   * A page of the items that ran out of attempts (or could not be read), in order of death;
   * pass `next` back as `after` (undefined: the last page). O(log n + limit) whatever the page.
   */
  deadLetters(options?: PageOptions): Promise<Page<DeadLetter<T>>>;
  /** What the queue holds under `id` (in flight: with `leaseExpiry`; dead: `reason`, `diedAt`), or undefined. */
  get(id: string): Promise<ItemInfo<T> | undefined>;
  /** A page of pending items in deadline order (FIFO among ties); O(log n + limit) whatever the page. */
  pending(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** A page of the items in flight, by lease expiry. */
  inFlight(options?: PageOptions): Promise<Page<ItemInfo<T>>>;
  /** Stops deliveries for every process (offers still land): true if it was running. */
  pause(): Promise<boolean>;
  /** Lets deliveries run again, for every process: true if it was paused. */
  resume(): Promise<boolean>;
  /** A dead letter back into the queue, due now, attempts reset: true if it was dead. */
  retryDead(id: string): Promise<boolean>;
  /**
   * Creates the schedule `id`, or updates it (its chain goes on when its rule is the same):
   * each occurrence is an item with `value`, taken like any other, with `job.schedule` = `id`
   * and `job.deadline` = its due time. Resolves with the schedule.
   */
  schedule(id: string, rule: ScheduleRule, value: T, options?: ScheduleOptions): Promise<ScheduleInfo<T>>;
  /** Removes a schedule and its pending occurrence (a run in flight finishes): true if there was one. */
  unschedule(id: string): Promise<boolean>;
  /** Every schedule of the queue, by id. */
  schedules(): Promise<ScheduleInfo<T>[]>;
  /** Removes a dead letter: true if it was dead. */
  deleteDead(id: string): Promise<boolean>;
  /** Removes the dead letters that died at least `olderThan` ms ago by the server's clock (default 0: all); resolves to how many. */
  purgeDead(options?: { olderThan?: number }): Promise<number>;
  /** Removes every item (pending, in flight and dead) and every schedule. */
  clear(): Promise<void>;
  /** Rejects waiting takes, lets process() handlers finish, closes the connections it opened. */
  close(): Promise<void>;
  /** close(), for `await using queue = new RedisDelayQueue(...)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A RedisDelayQueue is an EventTarget: delivered, acked, nacked, redelivered (a lease expired
 * and the item came back), dead, error, paused and resumed; `released` (a delivery no take
 * received went back) with `observe: true`. By default the events of this process (its
 * deliveries and their outcomes, the leases its take script put back, pause and resume as its
 * consumer hears them); with `observe: true` those of every process.
 */
// biome-ignore lint/correctness/noUnusedVariables: merged with the class, whose type parameters it must repeat
export interface RedisDelayQueue<T extends Jsonable<T> = Json>
  extends QueueEvents<DurableEngineEvents & { released: { id: string } }> {}

/** What a closed queue's methods throw and its waiting takes reject with: the class tarry-queue exports. */
export { ClosedError } from "./tarry.js";
