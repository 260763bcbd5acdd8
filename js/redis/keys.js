// The names of a queue's keys and of its pub/sub channel: the one module that builds them.
// Every script gets the keys as KEYS[1..10], in the order of KEY_NAMES (what each one holds:
// js/redis/lua/includes/keys.lua). All share the hash tag {name}, so that one Redis Cluster
// shard holds a queue and runs its scripts.

/** The keys of a queue, in the order the scripts receive them. */
export const KEY_NAMES = /** @type {const} */ ([
  "items",
  "pending",
  "leased",
  "dead",
  "seq",
  "reasons",
  "meta",
  "events",
  "observed",
  "schedules",
]);

/**
 * @typedef {object} QueueKeys
 * @property {string[]} list the key names, as the scripts' KEYS
 * @property {string} channel the channel on which a new head's deadline is published
 */

/**
 * The keys of the queue `name` under `prefix` (both checked: no braces).
 * @param {string} prefix
 * @param {string} name
 * @returns {QueueKeys}
 */
export function keysOf(prefix, name) {
  const base = `${prefix}{${name}}:`;
  return { list: KEY_NAMES.map((k) => base + k), channel: `${base}head` };
}
