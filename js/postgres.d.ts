// Types of tarry-queue/postgres: a delay queue in PostgreSQL shared by many processes.

/**
 * `tarry-queue/postgres`: a delay queue in PostgreSQL (≥ 13), in the database the application
 * already uses. Offers, cancels and reschedules can run inside the caller's transaction (a
 * rollback leaves no item); the server's clock decides what is due; a delivered item is leased
 * to its consumer until it is acked. Needs the optional peer dependency `pg`.
 *
 * @module tarry-queue/postgres
 */

import type {
  DurableEngine,
  DurableEngineConsumer,
  DurableEngineDeadLetter,
  DurableEngineEvents,
  DurableEngineJob,
  DurableEngineOfferItem,
  DurableEngineTakerStats,
  DurableEngineWorker,
  IfExists,
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

/** One delivery of an item, leased to this process until ack(), nack() or the lease runs out: the contract's (tarry.d.ts; deadline by clock_timestamp()). */
export type PostgresJob<T extends Jsonable<T> = Json> = DurableEngineJob<T>;

/** A dead letter, as the engine contract has it (tarry.d.ts), and its text when it could not be read. */
export interface DeadLetter<T extends Jsonable<T> = Json> extends DurableEngineDeadLetter<T> {
  /** The value, or undefined when it could not be read (then `raw` holds the text). */
  value: T | undefined;
  /** When it was dead-lettered, epoch ms by the server's clock (clock_timestamp()). */
  diedAt: number;
  raw?: string;
}

/**
 * The engine contract's figures and those of a consumer that takes (tarry.d.ts; lateness:
 * server time at transfer minus deadline). The counts by state, `headDelay` and `paused` are read from
 * Postgres (the same for every process); the timer and delivery figures are this process's
 * own. There is no `all` (every process's figures, as on Redis): each process counts its
 * deliveries in memory, so that consumers never write to one shared row.
 */
export interface PostgresQueueStats extends DurableEngineTakerStats {}

/** What process() returns: the contract's (tarry.d.ts). */
export type PostgresWorker = DurableEngineWorker;

/**
 * A delay queue in PostgreSQL: items named by string ids, due by the server's clock, handed out
 * in deadline order (FIFO among ties) to one consumer at a time, at least once.
 */
export declare class PostgresDelayQueue<T extends Jsonable<T> = Json> {
  constructor(options: PostgresDelayQueueOptions);
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
}

/**
 * A PostgresDelayQueue keeps the engine contract (`DurableEngine`, tarry.d.ts: the pages, dead
 * letters, pause and resume, schedules, stats, events; `close()` also rejects waiting takes,
 * lets process() handlers finish and gives back the pool it opened), and is an EventTarget: delivered, acked, nacked, redelivered, dead, error, paused and resumed: the
 * events of this process (its deliveries and their outcomes, the leases its take statement
 * put back, pause and resume as its consumer hears them).
 */
export interface PostgresDelayQueue<T extends Jsonable<T> = Json>
  extends DurableEngine<T, PostgresQueueStats, DeadLetter<T>, DurableEngineEvents>,
    DurableEngineConsumer<T, PostgresJob<T>, PostgresWorker> {}

/** An error of the connection to Postgres (no connection, no answer within commandTimeout, a failed statement), its message redacted. */
export declare class PostgresError extends Error {
  name: string;
  /** The driver's SQLSTATE or system code, when it gave one. */
  code?: string;
}

/** What a closed queue's methods throw and its waiting takes reject with: the class tarry-queue exports. */
export { ClosedError } from "./tarry.js";
