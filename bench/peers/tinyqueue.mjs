// The npm-package peer: tinyqueue (a binary heap of objects with a comparator) behind the
// same single-timer wrapper. tinyqueue cannot remove an arbitrary item, so cancel is lazy:
// the handle is the entry itself, cancel marks it dead in O(1), dead entries are skipped
// when they reach the head, and the heap is rebuilt (O(n) heapify) when dead entries
// outnumber live ones, so churn does not grow it without bound.

import TinyQueue from "tinyqueue";
import { TimerQueue } from "./timer-queue.mjs";

const byKey = (a, b) => a.deadline - b.deadline || a.seq - b.seq;

class LazyHeap {
  #heap = new TinyQueue([], byKey);
  #live = 0;
  #dead = 0;
  #nextSeq = 0;

  get size() {
    return this.#live;
  }

  insert(deadline, value) {
    const entry = { deadline, seq: this.#nextSeq++, value, live: true };
    this.#heap.push(entry);
    this.#live++;
    return entry;
  }

  remove(entry) {
    if (!entry.live) return undefined;
    entry.live = false;
    this.#live--;
    this.#dead++;
    if (this.#dead > this.#live && this.#dead > 1024) this.#compact();
    const v = entry.value;
    entry.value = undefined;
    return v;
  }

  headDeadline() {
    const heap = this.#heap;
    while (heap.length !== 0) {
      const head = heap.data[0];
      if (head.live) return head.deadline;
      heap.pop();
      this.#dead--;
    }
    return Infinity;
  }

  /** Only after headDeadline() found a live head. */
  popHead() {
    const entry = this.#heap.pop();
    entry.live = false;
    this.#live--;
    const v = entry.value;
    entry.value = undefined;
    return v;
  }

  #compact() {
    this.#heap = new TinyQueue(
      this.#heap.data.filter((e) => e.live),
      byKey,
    );
    this.#dead = 0;
  }
}

/** A delay queue: tinyqueue with lazy deletion behind the single-timer wrapper. */
export class TinyQueueDelayQueue extends TimerQueue {
  constructor() {
    super(new LazyHeap());
  }
}
