//! [`Order`]: items in `(deadline, seq)` order, paged from any point.
//!
//! A [`DelayQueue`](crate::DelayQueue) keeps its items in a heap, which finds the head in
//! O(1) and removes any item in O(log n), but cannot list the items that follow a given one:
//! the items before it form the top of the heap, and a search must cross all of them. A queue
//! that is inspected page by page (a Durable Object's pending items, shown 100 at a time out
//! of 10⁶) needs that, so it keeps its items here instead, sorted by `(deadline, seq)`,
//! where the caller chooses `seq` (unique; it orders equal deadlines and names the item),
//! and each item is given a small slot for the caller's table of values.
//!
//! The items sit in sorted runs of 256 to 512 (a list of sorted lists, as Python's
//! `sortedcontainers` keeps them), found by binary search over the runs' last keys and then
//! within a run: a page of `limit` items after any key costs O(log n + limit), whatever the
//! key's rank; head O(1); insert and remove O(log n) comparisons plus a move of at most one
//! run's entries (24 bytes each), and a run split or dropped once per few hundred. A B-tree
//! would do the same with more code in every page's wasm. Nothing here waits or reads a
//! clock: deadlines are only compared.
//!
//! ```
//! use tarry_queue::Order;
//! let mut order = Order::default();
//! let a = order.insert(20.0, 1).unwrap();
//! let b = order.insert(10.0, 2).unwrap();
//! let c = order.insert(20.0, 0).unwrap();
//! assert_eq!(order.head(), Some(b));
//! // After (10, 2): the items due at 20, seq 0 before seq 1.
//! assert_eq!(order.after(Some((10.0, 2)), 10), [c, a]);
//! assert_eq!(order.remove(20.0, 0), Some(c));
//! ```

use std::cmp::Ordering;
use std::fmt;

/// The largest `seq`: every seq is exact in a JS number (below 2⁵³).
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// The most items an order holds (as many as a [`DelayQueue`](crate::DelayQueue)).
const MAX_SLOTS: u32 = crate::MAX_ITEMS as u32;

/// Why an insert was refused. The order is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRefusal {
    /// The deadline was NaN or infinite.
    NotFinite,
    /// The seq was above [`MAX_SEQ`].
    SeqTooLarge,
    /// An item with this deadline and seq is in the order already.
    Present,
    /// The order holds as many items as it may.
    Full,
}

impl fmt::Display for KeyRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyRefusal::NotFinite => "the deadline must be a finite number",
            KeyRefusal::SeqTooLarge => "the seq must be below 2^53",
            KeyRefusal::Present => "an item with this deadline and seq is present",
            KeyRefusal::Full => "the order is full",
        })
    }
}

impl std::error::Error for KeyRefusal {}

/// A sort key: the deadline (finite; -0.0 is stored as 0.0, so the two are one deadline, as
/// in the heap), then the seq.
#[derive(Debug, Clone, Copy)]
struct Key {
    deadline: f64,
    seq: u64,
}

impl Key {
    fn new(deadline: f64, seq: u64) -> Key {
        // -0.0 + 0.0 is 0.0: total_cmp would put -0.0 first.
        Key { deadline: deadline + 0.0, seq }
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        self.deadline.total_cmp(&other.deadline).then(self.seq.cmp(&other.seq))
    }
}

/// One item: its key and its slot.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    slot: u32,
}

/// Items in `(deadline, seq)` order, each with a slot; see the [module documentation](self).
#[derive(Default)]
pub struct Order {
    /// Sorted runs, each non-empty and at most `2 * CHUNK` long; every key of a run is below
    /// every key of the next.
    runs: Vec<Vec<Entry>>,
    len: usize,
    /// Slots given back, reused before new ones.
    free: Vec<u32>,
    /// Slots given out so far (the next new slot).
    slots: u32,
}

/// A run that grows past twice this splits in two.
const CHUNK: usize = 256;

impl Order {
    /// Adds an item due at `deadline`, its ties ordered by `seq`; the slot it is given.
    pub fn insert(&mut self, deadline: f64, seq: u64) -> Result<u32, KeyRefusal> {
        if !deadline.is_finite() {
            return Err(KeyRefusal::NotFinite);
        }
        if seq > MAX_SEQ {
            return Err(KeyRefusal::SeqTooLarge);
        }
        let key = Key::new(deadline, seq);
        // The run it belongs in: the first whose last key is not below it, else the last.
        let r = self.runs.partition_point(|run| run[run.len() - 1].key < key).min(self.runs.len().saturating_sub(1));
        let at = match self.runs.get(r) {
            Some(run) => {
                let at = run.partition_point(|e| e.key < key);
                if run.get(at).is_some_and(|e| e.key == key) {
                    return Err(KeyRefusal::Present);
                }
                at
            }
            None => 0,
        };
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None if self.slots < MAX_SLOTS => {
                self.slots += 1;
                self.slots - 1
            }
            None => return Err(KeyRefusal::Full),
        };
        if self.runs.is_empty() {
            self.runs.push(Vec::with_capacity(2 * CHUNK + 1));
        }
        let run = &mut self.runs[r];
        run.insert(at, Entry { key, slot });
        if run.len() > 2 * CHUNK {
            let mut tail = Vec::with_capacity(2 * CHUNK + 1);
            tail.extend_from_slice(&run[CHUNK..]);
            run.truncate(CHUNK);
            self.runs.insert(r + 1, tail);
        }
        self.len += 1;
        Ok(slot)
    }

    /// Removes the item `(deadline, seq)`; its slot (free for reuse from now on), or None
    /// when no such item is here.
    pub fn remove(&mut self, deadline: f64, seq: u64) -> Option<u32> {
        if !deadline.is_finite() {
            return None;
        }
        let key = Key::new(deadline, seq);
        let r = self.runs.partition_point(|run| run[run.len() - 1].key < key);
        let run = self.runs.get_mut(r)?;
        let at = run.partition_point(|e| e.key < key);
        if !run.get(at).is_some_and(|e| e.key == key) {
            return None;
        }
        let slot = run.remove(at).slot;
        if run.is_empty() {
            self.runs.remove(r);
        }
        self.len -= 1;
        self.free.push(slot);
        Some(slot)
    }

    /// The slot of the earliest item.
    pub fn head(&self) -> Option<u32> {
        self.runs.first().map(|run| run[0].slot)
    }

    /// The deadline and seq of the earliest item.
    pub fn head_key(&self) -> Option<(f64, u64)> {
        self.runs.first().map(|run| (run[0].key.deadline, run[0].key.seq))
    }

    /// Up to `limit` slots, in order, of the items after `(deadline, seq)` (which need not be
    /// present), or from the first when `after` is None. O(log n + limit).
    pub fn after(&self, after: Option<(f64, u64)>, limit: usize) -> Vec<u32> {
        let (mut r, mut at) = (0, 0);
        if let Some((deadline, seq)) = after {
            if deadline.is_nan() {
                return Vec::new(); // NaN names no place: nothing comes after it
            }
            let key = Key::new(deadline, seq);
            r = self.runs.partition_point(|run| run[run.len() - 1].key <= key);
            at = self.runs.get(r).map_or(0, |run| run.partition_point(|e| e.key <= key));
        }
        let mut out = Vec::with_capacity(limit.min(self.len));
        while out.len() < limit && r < self.runs.len() {
            let run = &self.runs[r];
            let take = (run.len() - at).min(limit - out.len());
            out.extend(run[at..at + take].iter().map(|e| e.slot));
            r += 1;
            at = 0;
        }
        out
    }

    /// Every item's slot, in order.
    pub fn slots(&self) -> Vec<u32> {
        self.after(None, self.len)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
