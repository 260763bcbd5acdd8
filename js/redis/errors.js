// What a Redis error means for a queue, said so that its user can act on it: a key of another
// type, a permission the Redis user lacks (which ACL rule to add), a database Redis refused,
// no connection or no reply within the queue's commandTimeout, a connection lost before the
// reply, a cluster slot that stayed migrating for all of it (or a cluster node reached through
// a client that is no Cluster). Each keeps the Redis error as its `cause`.
// docs/redis.md#permissions lists the ACL rules a queue needs. Every error a queue hands its
// caller or its onerror goes through `redacted` first: no password of a URL ever shows.

import { redactError } from "../engine/redact.js";

/**
 * Where a queue lives, for messages.
 * @typedef {{ keys: string[], prefix: string, url: string | undefined }} Where
 */

/** The commands a queue's scripts call (docs/redis.md#permissions lists the ACL rules a queue needs). */
const SCRIPT_COMMANDS =
  "+time +hget +hset +hdel +hexists +hlen +hgetall +hincrby +hscan +zadd +zrem +zrange +zrangebyscore +zremrangebyrank +zrank +zscore +zcard +zcount +incrby +exists +del +xadd +publish";

/** How deep `redacted` follows an error's causes. */
const CAUSES = 8;

/**
 * `e` with the credentials of every URL in its message and stack masked (js/engine/redact.js), and
 * in those of its causes: what the queue says, and what ioredis said that it passes on.
 * @template E
 * @param {E} e
 * @returns {E}
 */
export function redacted(e) {
  /** @type {unknown} */
  let c = e;
  for (let depth = 0; c instanceof Error && depth < CAUSES; depth++, c = c.cause) redactError(c);
  return e;
}

/** @param {unknown} e */
const messageOf = (e) => String(/** @type {any} */ (e)?.message ?? e);

/** Errors that will not go away by themselves (so a waiting take rejects with them). */
const lastingErrors = new WeakSet();

/**
 * Marks `error` as one that will not go away by itself: a permission the Redis user lacks, a
 * database Redis refused, a key of another type, a client that was closed.
 * @template {Error} E
 * @param {E} error
 * @returns {E}
 */
export function lasting(error) {
  lastingErrors.add(error);
  return error;
}

/** @param {unknown} e */
export function isLasting(e) {
  return typeof e === "object" && e !== null && lastingErrors.has(e);
}

/** @param {unknown} e */
export function isNoScript(e) {
  return messageOf(e).startsWith("NOSCRIPT");
}

/**
 * Whether `e` is a Redis Cluster refusing a command because its slot is migrating or lives on
 * another node: TRYAGAIN (a multi-key command whose keys are split between the two nodes of a
 * migration), ASK or MOVED, as Redis says it or as ioredis' Cluster hands it on once it has
 * followed as many redirections as it may ("Too many Cluster redirections. Last error: ...").
 * Redis refuses such a command before running it.
 * @param {unknown} e
 */
export function isMigrating(e) {
  return refusal(e) !== null;
}

/**
 * Whether `e` is a refusal only a Redis Cluster node makes (a redirection, or CROSSSLOT for a
 * call whose keys are in several slots): through a client that is no Cluster, the server is a
 * cluster node and the call cannot succeed.
 * @param {unknown} e
 */
export function isClusterRefusal(e) {
  return isMigrating(e) || /^CROSSSLOT /.test(messageOf(e));
}

/** @param {unknown} e */
const refusal = (e) =>
  /^(?:Too many Cluster redirections\. Last error: (?:ReplyError: )?)?(TRYAGAIN|ASK|MOVED) /.exec(messageOf(e))?.[1] ??
  null;

/**
 * Whether `e` is Redis refusing the database a client selects (as it connects).
 * @param {unknown} e
 */
export function selectFailed(e) {
  return /DB index is out of range|invalid DB index|SELECT is not allowed/i.test(messageOf(e));
}

/**
 * A Redis error, with what it means for this queue when that is clear (else `e` itself).
 * @param {unknown} e
 * @param {Where} where
 */
export function explain(e, where) {
  const m = messageOf(e);
  const pattern = `${where.prefix}*`;
  const fix = (/** @type {string} */ rule) =>
    `: give the user ${rule} (for example ACL SETUSER <user> ${rule}; docs/redis.md#permissions lists every rule a queue needs)`;
  let said;
  if (m.startsWith("WRONGTYPE")) {
    said = `a key of this queue holds another type of value (did something else write to ${where.keys.join(", ")}?)`;
  } else if (/can't publish to the channel|permissions to access one of the channels/.test(m)) {
    said = `the Redis user may not use the queue's pub/sub channel (${where.prefix}{…}:head)${fix(`&${pattern}`)}`;
  } else if (/permissions to access one of the keys|can't access at least one of the keys/.test(m)) {
    said = `the Redis user may not read or write the queue's keys${fix(`~${pattern}`)}`;
  } else if (/permissions to run the '([^']+)' command/.test(m)) {
    const command = /** @type {RegExpExecArray} */ (/permissions to run the '([^']+)' command/.exec(m))[1];
    said = `the Redis user may not run ${command.toUpperCase()}${fix(`+${command.toLowerCase()}`)}`;
  } else if (/can't run this command or subcommand/.test(m)) {
    said = `the Redis user may not run a command the queue's scripts call${fix(SCRIPT_COMMANDS)}`;
  } else if (selectFailed(e)) {
    said = `Redis refused the database ${where.url ? `of ${where.url} ` : ""}(${m})`;
  } else return e;
  return lasting(new Error(`tarry-queue/redis: ${said}`, { cause: e }));
}

/**
 * What the probe script found the Redis user may not do, as a lasting error naming the rules
 * to add; null when it found nothing.
 * @param {{ what: string, error: string }[]} found what the probe's commands answered with an error
 * @param {Where} where
 */
export function refusedByAcl(found, where) {
  // What else a command may answer here (a key of another type) is for the call to tell.
  const refused = found.filter((r) => /NOPERM|no permissions|can't (?:run|publish|access)/.test(r.error));
  if (refused.length === 0) return null;
  const pattern = `${where.prefix}*`;
  const commands = refused.filter((r) => r.what !== "channel").map((r) => r.what);
  const rules = [...(commands.length < refused.length ? [`&${pattern}`] : []), ...commands.map((c) => `+${c}`)];
  const what = [
    ...(commands.length < refused.length ? [`use the queue's pub/sub channel (${where.prefix}{…}:head)`] : []),
    ...(commands.length ? [`run ${commands.map((c) => c.toUpperCase()).join(", ")} in the queue's scripts`] : []),
  ];
  const rule = rules.join(" ");
  return lasting(
    new Error(
      `tarry-queue/redis: the Redis user may not ${what.join(" or ")}: give the user ${rule} (for example ACL SETUSER <user> ${rule}; docs/redis.md#permissions lists every rule a queue needs)`,
      { cause: new Error(refused.map((r) => `${r.what}: ${r.error}`).join("; ")) },
    ),
  );
}

/**
 * The probe found the queue created with another number of shards than it is opened with
 * (js/redis/shards.js): its items would be looked for under other hash tags.
 * @param {{ what: string, error: string }[]} found the probe's reply
 * @param {Where} where
 * @param {number} shards what the queue is opened with
 */
export function shardsRefused(found, where, shards) {
  const kept = found.find((r) => r.what === "shards");
  if (!kept) return null;
  const meta = where.keys[6];
  return lasting(
    new RangeError(
      `tarry-queue/redis: options.shards is ${shards}, but the queue (${meta}) was created with shards: ${kept.error}; open it with shards: ${kept.error} (changing the number of shards of a queue means moving its items to a new queue)`,
    ),
  );
}

/**
 * A call that found no connection within `ms`.
 * @param {number} ms
 * @param {Where} where
 * @param {unknown} cause the last connection error, if any
 */
export function noConnection(ms, where, cause) {
  const why = cause ? `: ${messageOf(cause)}` : "";
  const to = where.url ? ` at ${where.url}` : "";
  return new Error(`tarry-queue/redis: no connection to Redis${to} within ${ms} ms (options.commandTimeout)${why}`, {
    cause: cause ?? undefined,
  });
}

/**
 * A call whose connection closed before its reply came (ioredis: "Connection is closed.",
 * "Command aborted due to connection close", as when a primary dies or fails over): it may
 * or may not have run. Any other error is returned as it is.
 * @param {unknown} e
 * @param {Where} where
 */
export function connectionLost(e, where) {
  if (!/^(?:Connection is closed|Command aborted due to connection close)/.test(messageOf(e))) return e;
  const at = where.url ? ` at ${where.url}` : "";
  return new Error(
    `tarry-queue/redis: the connection to Redis${at} closed before the reply; the call may or may not have taken effect`,
    { cause: e },
  );
}

/**
 * A call sent that got no reply within `ms`.
 * @param {number} ms
 * @param {Where} where
 */
export function noReply(ms, where) {
  const from = where.url ? ` at ${where.url}` : "";
  return new Error(
    `tarry-queue/redis: no reply from Redis${from} within ${ms} ms (options.commandTimeout); the call may or may not have taken effect`,
  );
}

/**
 * A call not sent yet (it waited for the calls on their way before it: js/redis/connection.js)
 * when one of those got no reply within `ms`.
 * @param {number} ms
 * @param {Where} where
 */
export function notSent(ms, where) {
  const from = where.url ? ` at ${where.url}` : "";
  return new Error(
    `tarry-queue/redis: no reply from Redis${from} within ${ms} ms (options.commandTimeout) to the calls sent before this one; this call was not sent and did not take effect`,
  );
}

/**
 * A call that a cluster slot migration kept refusing for all of its `ms`.
 * @param {number} ms
 * @param {Where} where
 * @param {unknown} cause the last refusal
 * @param {boolean} inflight whether the call was on its way again (then it may have run)
 */
export function migrating(ms, where, cause, inflight) {
  const effect = inflight ? "the call may or may not have taken effect" : "the call did not take effect";
  return new Error(
    `tarry-queue/redis: the cluster slot of the queue's keys (${where.keys[0]}) was migrating between nodes for all of ${ms} ms (options.commandTimeout), Redis answering ${refusal(cause)}; ${effect}`,
    { cause },
  );
}

/**
 * A cluster refusal (MOVED, ASK, TRYAGAIN, CROSSSLOT) that reached a client that is no ioredis Cluster.
 * @param {unknown} e
 */
export function notACluster(e) {
  return lasting(
    new Error(
      "tarry-queue/redis: the Redis server is a node of a Redis Cluster that holds only some of the queue's slots (a queue with shards > 1 spans several): pass an ioredis Cluster as `redis` (new Cluster([{ host, port }]))",
      { cause: e },
    ),
  );
}
