// The fair peer: the same design as tarry's core, written carefully in plain JS.
//
// An indexed 4-ary min-heap of (deadline, sequence) keys in typed arrays (struct of arrays,
// so sifting touches flat memory and nothing is allocated per item), a slot table mapping
// each slot to its heap position for O(log n) cancel, a free list threaded through the
// position array, and generation-tagged handles (generation · 2³² + slot) so a stale
// handle never names a newer item. Values live in a plain array indexed by slot.
// Arrays grow by doubling. Four children per node, as in tarry's core; `ARITY` is a module
// constant so that V8 folds it.

import { TimerQueue } from "./timer-queue.mjs";

const ARITY = 4;
const TWO32 = 4294967296;

export class IndexedHeap {
  // By heap position.
  #deadline;
  #seq;
  #slotAt;
  // By slot: heap position when live; when free, -2 - (next free slot), -1 ending the list.
  #pos;
  #gen;
  #values = [];
  #n = 0;
  #slots = 0;
  #free = -1;
  #nextSeq = 0;

  constructor(capacity = 1024) {
    this.#deadline = new Float64Array(capacity);
    this.#seq = new Float64Array(capacity);
    this.#slotAt = new Uint32Array(capacity);
    this.#pos = new Int32Array(capacity);
    this.#gen = new Uint32Array(capacity);
  }

  get size() {
    return this.#n;
  }

  insert(deadline, value) {
    let slot = this.#free;
    if (slot >= 0) {
      this.#free = -2 - this.#pos[slot];
      this.#gen[slot]++;
    } else {
      slot = this.#slots++;
      if (slot === this.#pos.length) this.#grow();
      this.#gen[slot] = 1;
    }
    this.#values[slot] = value;
    const i = this.#n++;
    this.#siftUp(i, deadline, this.#nextSeq++, slot);
    return this.#gen[slot] * TWO32 + slot;
  }

  remove(handle) {
    const slot = handle >>> 0;
    if (slot >= this.#slots || this.#pos[slot] < 0 || this.#gen[slot] !== (handle - slot) / TWO32) return undefined;
    const v = this.#values[slot];
    this.#removeAt(this.#pos[slot]);
    return v;
  }

  headDeadline() {
    return this.#n === 0 ? Infinity : this.#deadline[0];
  }

  popHead() {
    const v = this.#values[this.#slotAt[0]];
    this.#removeAt(0);
    return v;
  }

  #removeAt(i) {
    const slot = this.#slotAt[i];
    this.#values[slot] = undefined;
    this.#pos[slot] = -2 - this.#free;
    this.#free = slot;
    const last = --this.#n;
    if (i === last) return;
    const d = this.#deadline[last];
    const s = this.#seq[last];
    const sl = this.#slotAt[last];
    if (i > 0) {
      const p = ((i - 1) / ARITY) | 0;
      const pd = this.#deadline[p];
      if (d < pd || (d === pd && s < this.#seq[p])) {
        this.#siftUp(i, d, s, sl);
        return;
      }
    }
    this.#siftDown(i, d, s, sl);
  }

  #siftUp(i, d, s, sl) {
    const deadline = this.#deadline;
    const seq = this.#seq;
    const slotAt = this.#slotAt;
    const pos = this.#pos;
    while (i > 0) {
      const p = ((i - 1) / ARITY) | 0;
      const pd = deadline[p];
      if (pd < d || (pd === d && seq[p] < s)) break;
      deadline[i] = pd;
      seq[i] = seq[p];
      const ps = slotAt[p];
      slotAt[i] = ps;
      pos[ps] = i;
      i = p;
    }
    deadline[i] = d;
    seq[i] = s;
    slotAt[i] = sl;
    pos[sl] = i;
  }

  #siftDown(i, d, s, sl) {
    const deadline = this.#deadline;
    const seq = this.#seq;
    const slotAt = this.#slotAt;
    const pos = this.#pos;
    const n = this.#n;
    for (;;) {
      const first = ARITY * i + 1;
      if (first >= n) break;
      const end = Math.min(first + ARITY, n);
      let best = first;
      let bd = deadline[first];
      let bs = seq[first];
      for (let c = first + 1; c < end; c++) {
        const cd = deadline[c];
        if (cd < bd || (cd === bd && seq[c] < bs)) {
          best = c;
          bd = cd;
          bs = seq[c];
        }
      }
      if (d < bd || (d === bd && s < bs)) break;
      deadline[i] = bd;
      seq[i] = bs;
      const bsl = slotAt[best];
      slotAt[i] = bsl;
      pos[bsl] = i;
      i = best;
    }
    deadline[i] = d;
    seq[i] = s;
    slotAt[i] = sl;
    pos[sl] = i;
  }

  #grow() {
    const cap = this.#pos.length * 2;
    const grow = (a) => {
      const b = new a.constructor(cap);
      b.set(a);
      return b;
    };
    this.#deadline = grow(this.#deadline);
    this.#seq = grow(this.#seq);
    this.#slotAt = grow(this.#slotAt);
    this.#pos = grow(this.#pos);
    this.#gen = grow(this.#gen);
  }
}

/** A delay queue: the indexed heap behind the single-timer wrapper. */
export class HeapDelayQueue extends TimerQueue {
  constructor() {
    super(new IndexedHeap());
  }
}
