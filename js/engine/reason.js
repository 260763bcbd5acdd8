// A dead letter's reason, made once for every engine from what a handler threw (or what a
// nack() was given): the message, kept short, and, separately, the stack, which the
// dashboard shows only on demand. Both are bounded, so that one failing handler with a huge
// message does not make every dead letter huge, and both are redacted (js/engine/redact.js): a
// message that quotes a connection URL keeps no password in storage. Plain JS: the Redis and
// the Durable Object engines call it where a failure becomes a nack or a dead letter.

import { redact } from "./redact.js";

/** The longest reason kept, in UTF-16 code units (longer ones are cut, ending in "…"). */
export const MAX_REASON = 1000;
/** The longest stack kept, in UTF-16 code units. */
export const MAX_STACK = 8000;

/**
 * What a dead letter keeps of a failure: `reason`, "Name: message" for an Error, else the
 * text of what was given; `stack`, the Error's stack when it has one, else undefined.
 * @param {unknown} failure
 * @returns {{ reason: string, stack: string | undefined }}
 */
export function reasonOf(failure) {
  if (failure instanceof Error) {
    const name = typeof failure.name === "string" && failure.name !== "" ? failure.name : "Error";
    const reason = failure.message === "" ? name : `${name}: ${failure.message}`;
    const stack = typeof failure.stack === "string" && failure.stack !== "" ? failure.stack : undefined;
    return { reason: cut(redact(reason), MAX_REASON), stack: stack && cut(redact(stack), MAX_STACK) };
  }
  return { reason: cut(redact(String(failure)), MAX_REASON), stack: undefined };
}

function cut(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
