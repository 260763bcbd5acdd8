// What the Redis server may lose of a queue, and what the queue says about it.
//
// Eviction. When Redis runs out of memory under a
// policy that evicts any key (allkeys-*), it drops whole keys: a queue keeps its items in a few
// large keys (js/redis/keys.js), so one eviction loses most of them at once, silently, offers
// that had resolved included. Under noeviction a write fails instead ("OOM command not
// allowed"), which the call that made it reports. The volatile-* policies evict only keys with
// a time to live, and a queue never sets one on its keys, so they leave its keys alone (and act
// as noeviction for them).
//
// The policy is read once per queue, at its first call (CONFIG GET, in its place in the line;
// one CONFIG GET for the queues on one client whose first calls come in the same turn).
// A policy that can evict is reported through onerror once, not refused: the queue works until
// memory runs out, managed services often fix the policy for the user, and a policy can be
// changed at any time (CONFIG SET), so a check at start proves nothing later anyway. A server
// that refuses CONFIG GET (managed services, ACL users without +config|get) is said once too.
//
// Replication. An offer that fewer replicas than `waitForReplicas` asks for confirmed in time
// is stored on the primary, and its call rejects with a WaitForReplicasError (exported by
// tarry-queue/redis, so that callers can tell it apart with instanceof).

/** The policies under which Redis never evicts a key that has no time to live. */
export const KEEPS_QUEUES = ["noeviction", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"];

/**
 * The warning for a server's maxmemory-policy, or null when it cannot evict a queue's keys.
 * @param {string} policy
 * @returns {Error | null}
 */
export function evictionWarning(policy) {
  if (KEEPS_QUEUES.includes(policy)) return null;
  return new Error(
    `tarry-queue/redis: the server's maxmemory-policy is ${policy}: when Redis runs out of memory it may evict ` +
      "a queue's keys, each holding many items, and they are lost without an error. Set it to noeviction " +
      "(CONFIG SET maxmemory-policy noeviction, and maxmemory-policy noeviction in redis.conf); then a full " +
      "Redis refuses writes instead, and the call that made one rejects (docs/redis.md#durability-and-failover)",
  );
}

/**
 * What a refused CONFIG GET means for the queue.
 * @param {unknown} cause
 */
export function policyUnknown(cause) {
  return new Error(
    "tarry-queue/redis: could not read the server's maxmemory-policy (CONFIG GET was refused), so it is " +
      "not known whether Redis may evict the queue's keys when it runs out of memory: make sure the policy is " +
      "noeviction or volatile-* (docs/redis.md#durability-and-failover)",
    { cause },
  );
}

/**
 * Reads the policy with `get` and tells `report` what it found (a policy that can evict, or a
 * refusal). Resolves true once it knows (or was refused), false when Redis could not be asked
 * (no connection): then the next call asks again.
 * @param {() => Promise<unknown>} get CONFIG GET maxmemory-policy, its reply
 * @param {(error: Error) => void} report
 * @returns {Promise<boolean>}
 */
export async function checkEviction(get, report) {
  let reply;
  try {
    reply = await get();
  } catch (e) {
    // Redis refused the command (an ACL without +config|get, a service that renamed or removed
    // CONFIG): said once. Anything else (no connection, a database refused): not asked yet.
    if (!refused(e)) return false;
    report(policyUnknown(e));
    return true;
  }
  const policy = Array.isArray(reply) ? reply[1] : undefined;
  if (typeof policy !== "string") {
    report(policyUnknown(new Error(`CONFIG GET maxmemory-policy answered ${JSON.stringify(reply)}`)));
    return true;
  }
  const warning = evictionWarning(policy);
  if (warning) report(warning);
  return true;
}

/**
 * What a queue calls before its calls: the first reads the server's eviction policy
 * (checkEviction, through `conn` in its place in the line) and says what it means through
 * `report`; later ones do nothing, unless that read found no connection (then the next asks again).
 * @param {import("./connection.js").Connection} conn
 * @param {(error: Error) => void} report
 * @returns {() => void}
 */
export function evictionReader(conn, report) {
  let read = false;
  const get = () => conn.ask("maxmemory-policy", (client) => client.config("GET", "maxmemory-policy"));
  return () => {
    if (read) return;
    read = true;
    checkEviction(get, report).then((known) => {
      if (!known) read = false; // no connection: the next call asks again
    });
  };
}

/** @param {unknown} e what CONFIG GET failed with */
function refused(e) {
  const error = /** @type {any} */ (e);
  return (
    error?.name === "ReplyError" &&
    /NOPERM|no permissions|unknown command|not allowed|unknown subcommand/i.test(String(error.message))
  );
}

/**
 * What a script's reply that found the queue's sequence counter gone (while its records
 * remained) means: Redis lost keys of the queue, by eviction or by a command that deleted them.
 * The counter was resumed above every pending item's, so order among equal deadlines holds.
 * @param {string} seqKey the counter's key
 */
export function keysVanished(seqKey) {
  return new Error(
    `tarry-queue/redis: the queue's sequence counter (${seqKey}) was gone while its items remained: Redis ` +
      "evicted or deleted a key of the queue, and items it held may be lost. The counter resumed after the " +
      "highest one in use. Check the server's maxmemory-policy (noeviction) and what else writes to these " +
      "keys (docs/redis.md#durability-and-failover)",
  );
}

/**
 * What an offer rejects with when fewer replicas than `options.waitForReplicas` asks for
 * confirmed it within its timeout: the item is stored on the primary, and is lost only if the
 * primary fails before a replica has it.
 */
export class WaitForReplicasError extends Error {
  /**
   * @param {string} message
   * @param {number} acknowledged the replicas that confirmed the offer (WAIT's answer)
   * @param {number} required the replicas asked for (`waitForReplicas.count`)
   */
  constructor(message, acknowledged, required) {
    super(message);
    this.name = "WaitForReplicasError";
    this.acknowledged = acknowledged;
    this.required = required;
  }
}

/**
 * An offer the primary stored that fewer replicas than asked confirmed within the timeout.
 * @param {number} acknowledged replicas that confirmed it (WAIT's answer)
 * @param {{ count: number, timeout: number }} asked
 */
export function fewerReplicas(acknowledged, asked) {
  return new WaitForReplicasError(
    `tarry-queue/redis: the offer is stored on the primary, but ${acknowledged} of ${asked.count} replicas ` +
      `confirmed it within ${asked.timeout} ms (options.waitForReplicas): the item exists and will be delivered ` +
      "unless the primary fails before a replica has it, in which case it is lost",
    acknowledged,
    asked.count,
  );
}
