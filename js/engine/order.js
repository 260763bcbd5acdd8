// Order: records in (deadline, seq) order, paged from any point, for a queue that is inspected
// page by page (DurableDelayQueue's pending items, shown 100 at a time out of 10⁶). A heap
// finds the head in O(1) but cannot list the items after a given one (the items before it are
// the top of the heap, and a search must cross all of them), so these records sit in sorted
// runs of at most RUN (a list of sorted lists, as Python's sortedcontainers keeps them), found
// by binary search over the runs' last records and then within a run: a page of `limit`
// records after any key costs O(log n + limit) whatever the key's rank; head O(1); add and
// remove O(log n) comparisons plus a move of at most RUN references, and a run split or
// dropped once per few hundred. Plain JS, so that no page that never pages carries it.
//
// A record is any object with a finite `deadline` and a `seq` no other record in the order
// has (seq orders equal deadlines); neither may change while it is in the order. `inOrder`
// on a record says whether it is in.

/** The most records a run holds; a fuller one is split in two. */
const RUN = 512;

/** Negative, 0 or positive as the key (deadline, seq) comes before, is, or comes after record `r`. */
function compare(deadline, seq, r) {
  return deadline !== r.deadline ? (deadline < r.deadline ? -1 : 1) : seq - r.seq;
}

/**
 * @template {{ deadline: number, seq: number, inOrder?: boolean }} R
 */
export class Order {
  /** Sorted runs, none empty; every record of a run comes before those of the next. @type {R[][]} */
  #runs = [];
  #size = 0;

  get size() {
    return this.#size;
  }

  /** Adds `record` at its (deadline, seq) place. A key present already is a RangeError. */
  add(/** @type {R} */ record) {
    const { deadline, seq } = record;
    if (!Number.isFinite(deadline)) throw new RangeError(`a deadline must be finite, got ${deadline}`);
    const runs = this.#runs;
    if (runs.length === 0) {
      runs.push([record]);
    } else {
      const i = this.#runAtOrAfter(deadline, seq);
      const run = runs[i];
      const j = lowerBound(run, deadline, seq);
      if (j < run.length && compare(deadline, seq, run[j]) === 0)
        throw new RangeError(`the order has (${deadline}, ${seq}) already`);
      run.splice(j, 0, record);
      if (run.length > RUN) runs.splice(i + 1, 0, run.splice(RUN >> 1));
    }
    this.#size++;
    record.inOrder = true;
  }

  /** Removes `record` if it is in the order. */
  remove(/** @type {R} */ record) {
    if (record.inOrder !== true) return;
    const runs = this.#runs;
    const i = this.#runAtOrAfter(record.deadline, record.seq);
    const run = runs[i];
    const j = lowerBound(run, record.deadline, record.seq);
    if (run[j] !== record) throw new Error(`the order lost (${record.deadline}, ${record.seq})`);
    run.splice(j, 1);
    if (run.length === 0) runs.splice(i, 1);
    this.#size--;
    record.inOrder = false;
  }

  /** The record with the earliest (deadline, seq), or undefined. */
  head() {
    return this.#runs.length === 0 ? undefined : this.#runs[0][0];
  }

  /** Up to `limit` records after the key (deadline, seq), which need not be present (-Infinity: from the first), in order. */
  after(deadline, seq, limit) {
    const runs = this.#runs;
    const out = [];
    // The first run whose last record comes after the key, and the first such record in it.
    let lo = 0;
    let hi = runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const run = runs[mid];
      if (compare(deadline, seq, run[run.length - 1]) < 0) hi = mid;
      else lo = mid + 1;
    }
    if (lo === runs.length) return out;
    let j = upperBound(runs[lo], deadline, seq);
    for (let i = lo; i < runs.length && out.length < limit; i++, j = 0) {
      const run = runs[i];
      while (j < run.length && out.length < limit) out.push(run[j++]);
    }
    return out;
  }

  /** Every record, head first. */
  sorted() {
    return this.#runs.flat();
  }

  /** The run whose records the key (deadline, seq) sits among: the first whose last record is at or after it, else the last. */
  #runAtOrAfter(deadline, seq) {
    const runs = this.#runs;
    let lo = 0;
    let hi = runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const run = runs[mid];
      if (compare(deadline, seq, run[run.length - 1]) <= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** The index of the first record of `run` at or after the key. */
function lowerBound(run, deadline, seq) {
  let lo = 0;
  let hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(deadline, seq, run[mid]) <= 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The index of the first record of `run` after the key. */
function upperBound(run, deadline, seq) {
  let lo = 0;
  let hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(deadline, seq, run[mid]) < 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
