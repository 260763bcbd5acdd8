// The log of what happened, newest first. Lines are queued as they happen and added to the
// page once per frame, at most LOGGED of them kept.
import { ms } from "./format.js";

const LOGGED = 150;

export class Log {
  /** Lines not yet in the page. */
  #unlogged = [];
  #list;

  /** @param {HTMLOListElement} list */
  constructor(list) {
    this.#list = list;
  }

  /** `kind` is the line's class: placed, cleared, paid, rescheduled or timeout. */
  add(kind, order, text, late) {
    this.#unlogged.push({ kind, order, text, late, at: new Date() });
  }

  /** Adds the queued lines to the page. */
  flush() {
    if (this.#unlogged.length === 0) return;
    const lines = this.#unlogged.length > LOGGED ? this.#unlogged.slice(-LOGGED) : this.#unlogged;
    this.#unlogged = [];
    const fragment = document.createDocumentFragment();
    for (let i = lines.length - 1; i >= 0; i--) fragment.append(line(lines[i]));
    this.#list.prepend(fragment);
    while (this.#list.childElementCount > LOGGED) this.#list.lastElementChild.remove();
  }
}

function line({ kind, order, text, late, at }) {
  const li = document.createElement("li");
  li.className = kind;
  const time = document.createElement("time");
  time.dateTime = at.toISOString();
  time.textContent = at.toLocaleTimeString("en-GB");
  const what = document.createElement("span");
  if (order) {
    li.dataset.order = order.id;
    const b = document.createElement("b");
    b.textContent = `#${order.id}`;
    what.append(b, ` ${order.customer}: ${text}`);
  } else {
    what.textContent = text[0].toUpperCase() + text.slice(1);
  }
  if (late !== undefined) {
    const span = document.createElement("span");
    span.className = "late";
    span.dataset.late = late.toFixed(3);
    span.textContent = ` · ${ms(late)} ms late`;
    what.append(span);
  }
  li.append(time, what);
  return li;
}
