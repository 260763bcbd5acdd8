// Types of tarry-queue/postgres: a delay queue in PostgreSQL shared by many processes.

/**
 * `tarry-queue/postgres`: a delay queue in PostgreSQL (≥ 13), in the database the application
 * already uses. Offers, cancels and reschedules can run inside the caller's transaction (a
 * rollback leaves no item); the server's clock decides what is due; a delivered item is leased
 * to its consumer until it is acked. Needs the optional peer dependency `pg`.
 *
 * @module tarry-queue/postgres
 */

import type { ScheduleInfo, ScheduleOptions, ScheduleRule } from "./tarry.js";
import type {
  AbortSignalLike,
  DurableEngine,
  DurableEngineDeadLetter,
  DurableEngineEvents,
  DurableEngineOfferItem,
  DurableEngineStats,
  IfExists,
  ItemInfo,
  Page,
  PageOptions,
} from "./tarry.js";
import type { Json, Jsonable } from "./redis.js";

export type { Json, Jsonable, JsonableProperty } from "./redis.js";
/** A schedule's rule, options and description: one declaration for every engine (tarry.d.ts). */
export type { ScheduleInfo, ScheduleOptions as PostgresScheduleOptions, ScheduleRule } from "./tarry.js";

/** A pg.Pool, or anything with its connect() (and, for LISTEN, its Client and options). */
export interface PoolLike {
  connect(): Promise<ClientLike & { release(destroy?: boolean | Error): void }>;
}

/** A pg client: the caller's, inside its open transaction, for the calls that take `client`. */
export interface ClientLike {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

export interface PostgresDelayQueueOptions {
  /** A postgres:// URL (a pool is opened and shared by the queues of the process with that URL) or a pg.Pool. Default "postgres://127.0.0.1:5432/postgres". */
  pg?: string | PoolLike;
  /** The queue's name: every process that opens it in the same schema shares its items. */
  name: string;
  /** The schema of the queue's tables: letters, digits and _, at most 50. Default "tarry". */
  schema?: string;
  /** Ms a delivered item stays leased to its consumer before it comes back. Default 5000. */
  visibilityTimeout?: number;
  /** Deliveries before an item goes to the dead letters. Default 5. */
  maxAttempts?: number;
  /** Ms between the checks that cover a missed notification (not a poll: the timer and NOTIFY deliver). Default 30000. */
  safetyInterval?: number;
  /**
   * Ms within which every call settles: a call that found no connection by then rejects
   * (nothing sent), one sent and not answered rejects saying it may or may not have taken
   * effect. Default 5000.
   */
  commandTimeout?: number;
  /**
   * Whether offer, cancel, reschedule and the consumer's statements are named prepared
   * statements (parsed once per connection). False for a PgBouncer before 1.21 in transaction
   * mode, or one whose `max_prepared_statements` is 0. Default true.
   */
  preparedStatements?: boolean;
  /** Errors no call can report (background wake-ups, lease extension, the LISTEN connection). Default: console.error. */
  onerror?: (error: unknown) => void;
}

/** The caller's client: the call runs inside its open transaction (with none open, as its own). */
export interface TransactionOptions {
  client?: ClientLike;
}

/** What an offer does when its id names an item already present: one declaration for every engine (tarry.d.ts). */
export type { IfExists } from "./tarry.js";

export interface OfferOptions extends TransactionOptions {
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

/** One item of offerMany(), as the engine contract has it (tarry.d.ts). */
export type OfferItem<T extends Jsonable<T> = Json> = DurableEngineOfferItem<T>;

/** One delivery of an item, leased to this process until ack(), nack() or the lease runs out. */
export interface PostgresJob<T extends Jsonable<T> = Json> {
  readonly id: string;
  readonly value: T;
  /** The deadline it was due at: epoch ms by the server's clock (clock_timestamp()). */
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

/** A dead letter, as the engine contract has it (tarry.d.ts), and its text when it could not be read. */
export interface DeadLetter<T extends Jsonable<T> = Json> extends DurableEngineDeadLetter<T> {
  /** The value, or undefined when it could not be read (then `raw` holds the text). */
  value: T | undefined;
  /** When it was dead-lettered, epoch ms by the server's clock (clock_timestamp()). */
  diedAt: number;
  raw?: string;
}

/**
 * The engine contract's figures (tarry.d.ts; lateness: server time at transfer minus
 * deadline), and Postgres's own. The counts by state, `headDelay` and `paused` are read from
 * Postgres (the same for every process); the timer and delivery figures are this process's
 * own. There is no `all` (every process's figures, as on Redis): each process counts its
 * deliveries in memory, so that consumers never write to one shared row.
 */
export interface PostgresQueueStats extends DurableEngineStats {
  /** This process: waiting take() calls. */
  takers: number;
  /** This process: the queue's alarm, armed (1) or not (0). */
  timersArmed: number;
  timerArms: number;
  /** This process: notifications received. */
  messages: number;
  /** Deliveries no take received (it left while the take statement ran): put back. */
  released: number;
}

export interface PostgresWorker {
  /** Stops taking items and resolves when the running handlers have finished (and acked). */
  close(): Promise<void>;
}

/**
 * A delay queue in PostgreSQL: items named by string ids, due by the server's clock, handed out
 * in deadline order (FIFO among ties) to one consumer at a time, at least once.
 */
export declare class PostgresDelayQueue<T extends Jsonable<T> = Json> {
  constructor(options: PostgresDelayQueueOptions);
  /** The queue's name. */
  readonly name: string;
  /** The schema of its tables. */
  readonly schema: string;
  /** Creates or updates the schema (idempotent, safe from many processes at once); resolves with the migration versions applied. */
  migrate(): Promise<number[]>;
  /** Offers value due delayMs after this call; resolves with its id once stored (with `client`: in its transaction). */
  offer(value: T, delayMs: number, options?: OfferOptions): Promise<string>;
  /** Offers value due at a wall-clock time, as the server's clock tells it. */
  offerAt(value: T, deadline: number | Date, options?: OfferOptions): Promise<string>;
  /** Checks every item, then offers them in order, all or nothing. */
  offerMany(items: OfferItem<T>[], options?: TransactionOptions): Promise<string[]>;
  /** Removes a pending item: true if it was pending. */
  cancel(id: string, options?: TransactionOptions): Promise<boolean>;
  /** A new delay for a pending item, counted from this call: true if it was pending. */
  reschedule(id: string, delayMs: number, options?: TransactionOptions): Promise<boolean>;
  /** Ms until a pending item's deadline by the server's clock, or undefined. */
  delayOf(id: string): Promise<number | undefined>;
  /** The number of pending items. */
  size(): Promise<number>;
  /** Counts by state from Postgres, and this process's timer and delivery figures. */
  stats(): Promise<PostgresQueueStats>;
  /** The next due item, leased to this process. With timeout it resolves undefined when that passes. */
  take(options?: { signal?: AbortSignalLike; timeout?: number }): Promise<PostgresJob<T> | undefined>;
  /** `for await (const job of queue)`: takes jobs as they come due, until close(). */
  [Symbol.asyncIterator](): AsyncIterator<PostgresJob<T>>;
  /** Runs handler for each due item, acks on success, nacks (retry after retryDelayMs) on a throw. */
  process(
    handler: (value: T, job: PostgresJob<T>) => unknown,
    options?: { concurrency?: number; retryDelayMs?: number | ((attempt: number, error: unknown) => number) },
  ): PostgresWorker;
  /** A page of the items that ran out of attempts, in order of death; pass `next` back as `after`. */
  deadLetters(options?: PageOptions): Promise<Page<DeadLetter<T>>>;
  /** What the queue holds under `id`, or undefined. */
  get(id: string): Promise<ItemInfo<T> | undefined>;
  /** A page of pending items in deadline order (FIFO among ties). */
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
  /** Every schedule of the queue, by id: one that ended (its rule, maxRuns or stopAt) stays, with no nextRun. */
  schedules(): Promise<ScheduleInfo<T>[]>;
  /** Places no new occurrence of the schedule `id` until resumeSchedule() (a run in flight finishes): true if it was running. */
  pauseSchedule(id: string): Promise<boolean>;
  /**
   * Places again the occurrence the schedule `id` waited for when paused; if it came due
   * meanwhile, catchUp decides what runs: true if it was paused.
   */
  resumeSchedule(id: string): Promise<boolean>;
  /**
   * One extra run of the schedule `id` now, an occurrence due now (`<id>@<now>`): it counts
   * as a run (runs, lastRun, maxRuns), the pending occurrence stays. With overlap false,
   * while a run of the schedule lasts (taken, or waiting for its retry), nothing is added and
   * it resolves false; false too for an ended schedule or none. A paused schedule runs and
   * stays paused.
   */
  trigger(id: string): Promise<boolean>;
  /**
   * The next `n` (1 to 100) occurrences of the schedule `id` (epoch ms), from its rule: the
   * pending one first, none after stopAt, no more than maxRuns leaves. Reads the schedule
   * only; empty for an ended schedule or none.
   */
  nextRuns(id: string, n: number): Promise<number[]>;
  /** Removes a dead letter: true if it was dead. */
  deleteDead(id: string): Promise<boolean>;
  /** Removes the dead letters that died at least `olderThan` ms ago (default 0: all); resolves to how many. */
  purgeDead(options?: { olderThan?: number }): Promise<number>;
  /** Removes every item (pending, in flight and dead) and every schedule. */
  clear(): Promise<void>;
  /** Rejects waiting takes, lets process() handlers finish, gives back the pool it opened. */
  close(): Promise<void>;
  /** close(), for `await using queue = new PostgresDelayQueue(...)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A PostgresDelayQueue keeps the engine contract (`DurableEngine`, tarry.d.ts), and is an
 * EventTarget: delivered, acked, nacked, redelivered, dead, error, paused and resumed: the
 * events of this process (its deliveries and their outcomes, the leases its take statement
 * put back, pause and resume as its consumer hears them).
 */
export interface PostgresDelayQueue<T extends Jsonable<T> = Json>
  extends DurableEngine<T, PostgresQueueStats, DeadLetter<T>, DurableEngineEvents> {}

/** An error of the connection to Postgres (no connection, no answer within commandTimeout, a failed statement), its message redacted. */
export declare class PostgresError extends Error {
  name: string;
  /** The driver's SQLSTATE or system code, when it gave one. */
  code?: string;
}

/** What a closed queue's methods throw and its waiting takes reject with: the class tarry-queue exports. */
export { ClosedError } from "./tarry.js";
