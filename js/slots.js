// The slot table: the values of a queue's items, in a plain JS array indexed by slot, so
// that only numbers cross into wasm (a JsValue kept in Rust costs a trip through
// wasm-bindgen's externref table on every offer and cancel).
//
// A handle's low bits are its slot; the binding says which bits (`Deadlines.slotMask`, from
// the handle layout in src/heap.rs). This module is the only JS that knows it. JS names an
// item to the binding by handle; the binding hands items out by slot (a small integer, so
// no number is boxed on the way back), and passes both here as they are.

import { Deadlines } from "./wasm.js";

/** Read from the binding on first use: the wasm is not instantiated when this module loads. */
let mask = 0;

/** Values by slot, for the items of one queue. */
export class Slots {
  /** values[slot] is the value of the live item in that slot. @type {any[]} */
  #values = [];

  constructor() {
    if (mask === 0) mask = Deadlines.slotMask();
  }

  /** Keeps `value` for a handle the binding just gave out. */
  put(handle, value) {
    this.#values[handle & mask] = value;
  }

  /** The value of a live item, by its handle. */
  named(handle) {
    return this.#values[handle & mask];
  }

  /** The value of an item cancelled by its handle, forgotten here too. */
  forget(handle) {
    const slot = handle & mask;
    const value = this.#values[slot];
    this.#values[slot] = undefined;
    return value;
  }

  /** The value in a slot the binding handed out. */
  get(slot) {
    return this.#values[slot];
  }

  /** The value in a slot whose item has left the binding, forgotten here too. */
  take(slot) {
    const value = this.#values[slot];
    this.#values[slot] = undefined;
    return value;
  }

  /** Forgets every value. */
  clear() {
    this.#values = [];
  }
}
