// Credentials out of every text the package shows: error messages, logs, CLI output and
// HTTP bodies. A connection URL may carry a password in its userinfo (`redis://:S3cret@host`,
// or a user name, a colon and the password before the `@` of a postgres:// URL); whatever
// quotes one — our own messages, or a driver's error we pass on — goes through `redact`
// first. Plain JS: every entry may use it.

// scheme://[user][:password]@ — the userinfo part of any URL in the text. The user name is
// kept (it names a role, not a secret); the password, when present, becomes "***". A
// userinfo without a colon (`redis://S3cret@host`, ioredis reads it as the password) is
// masked whole. Bounded classes, no nested quantifiers: linear in the text's length.
const USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^\s/@:?#]*)(?::([^\s/@?#]*))?@/gi;

/**
 * The text with the credentials of every URL in it masked.
 * @param {string} text
 * @returns {string}
 * @example redact("no connection to redis://:S3cret@127.0.0.1:6379") // "no connection to redis://:***@127.0.0.1:6379"
 */
export function redact(text) {
  if (typeof text !== "string" || !text.includes("@")) return text;
  return text.replace(USERINFO, (_, scheme, user, password) =>
    password === undefined ? `${scheme}***@` : `${scheme}${user}:***@`,
  );
}

/**
 * The error with its message (and stack) redacted, in place, and returned: for errors a
 * driver made that quote a URL.
 * @template {unknown} E
 * @param {E} error
 * @returns {E}
 */
export function redactError(error) {
  if (error instanceof Error) {
    const message = redact(error.message);
    if (message !== error.message) {
      error.message = message;
      if (typeof error.stack === "string") error.stack = redact(error.stack);
    }
  }
  return error;
}
