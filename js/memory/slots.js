// The slot table: the values of a queue's items, in a plain JS array indexed by slot, so
// that only numbers cross into wasm (a JsValue kept in Rust costs a trip through
// wasm-bindgen's externref table on every offer and cancel).
//
// And the ids that callers chose for items (`offer(value, delayMs, { id })`): an id by slot
// and a Map from id to handle, made on the first id; an item leaving its slot (taken,
// cancelled, cleared) leaves the Map too. A queue whose items have no ids pays one null
// check per removal, nothing per item.
//
// And marks: which items a DelayQueue has seen expired (for its `expired` events), made on
// the first mark, cleared as an item leaves its slot or gets a new value.
//
// A handle's low bits are its slot; the binding says which bits (`Deadlines.slotMask`, from
// the handle layout in src/heap.rs). This module is the only JS that knows it. JS names an
// item to the binding by handle; the binding hands items out by slot (a small integer, so
// no number is boxed on the way back), and passes both here as they are.

import { Deadlines } from "../wasm.js";

/** Read from the binding on first use: the wasm is not instantiated when this module loads. */
let mask = 0;

/** Values by slot, for the items of one queue. */
export class Slots {
  /** values[slot] is the value of the live item in that slot. @type {any[]} */
  #values = [];
  /**
   * ids[slot] is the id of the live item in that slot, if it has one; null until the first id.
   * @type {(string | undefined)[] | null}
   */
  #ids = null;
  /**
   * The handle of the live item of each id (handles.get(ids[slot]) & mask === slot); null until the first id.
   * @type {Map<string, number> | null}
   */
  #handles = null;
  /** marks[slot] is true once the live item in that slot was seen expired; null until the first mark. @type {(true | undefined)[] | null} */
  #marks = null;

  constructor() {
    if (mask === 0) mask = Deadlines.slotMask();
  }

  /** Keeps `value` for a handle the binding just gave out. */
  put(handle, value) {
    this.#values[handle & mask] = value;
    if (this.#marks !== null) this.#marks[handle & mask] = undefined;
  }

  /** Gives a live item a new value; whether it is marked stays. */
  revalue(handle, value) {
    this.#values[handle & mask] = value;
  }

  /** The value of a live item, by its handle. */
  named(handle) {
    return this.#values[handle & mask];
  }

  /** The value of an item cancelled by its handle, forgotten here too. */
  forget(handle) {
    return this.take(handle & mask);
  }

  /** The value in a slot the binding handed out. */
  get(slot) {
    return this.#values[slot];
  }

  /** The value in a slot whose item has left the binding, forgotten here too. */
  take(slot) {
    const value = this.#values[slot];
    this.#values[slot] = undefined;
    if (this.#ids !== null) this.#unname(slot);
    if (this.#marks !== null) this.#marks[slot] = undefined;
    return value;
  }

  /** Marks the live item in a slot as seen expired (its `expired` event is out). */
  mark(slot) {
    this.#marks ??= [];
    this.#marks[slot] = true;
  }

  /** Whether the live item in a slot is marked. */
  marked(slot) {
    return this.#marks !== null && this.#marks[slot] === true;
  }

  /** Unmarks a live item by its handle (its deadline moved). */
  unmark(handle) {
    if (this.#marks !== null) this.#marks[handle & mask] = undefined;
  }

  /** Names a live item that has no id yet with `id`, which no live item has. */
  name(handle, id) {
    if (this.#ids === null) {
      this.#ids = [];
      this.#handles = new Map();
    }
    /** @type {(string | undefined)[]} */ (this.#ids)[handle & mask] = id;
    /** @type {Map<string, number>} */ (this.#handles).set(id, handle);
  }

  /** The handle of the live item named `id`, or undefined. */
  handleOf(id) {
    return this.#handles === null ? undefined : this.#handles.get(id);
  }

  /** The id of the item in a slot, or undefined. */
  idOf(slot) {
    return this.#ids === null ? undefined : this.#ids[slot];
  }

  /** Called only once an id was named, so neither table is null. */
  #unname(slot) {
    const ids = /** @type {(string | undefined)[]} */ (this.#ids);
    const id = ids[slot];
    if (id === undefined) return;
    ids[slot] = undefined;
    /** @type {Map<string, number>} */ (this.#handles).delete(id);
  }

  /** Forgets every value and id. */
  clear() {
    this.#values = [];
    this.#ids = null;
    this.#handles = null;
    this.#marks = null;
  }
}
