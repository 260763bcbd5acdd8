//! The indexed heap under [`DelayQueue`](crate::DelayQueue): a 4-ary min-heap of
//! `(deadline, sequence)` keys plus a slot table that knows where each live entry sits.
//!
//! * Each heap entry is 16 bytes and carries its whole sort key, so sifting touches one
//!   array; the slot table maps a slot to its heap position, so removing an arbitrary
//!   entry is O(log n) instead of a linear search.
//! * The sequence number breaks deadline ties in insertion order (FIFO). It is a `u32`;
//!   when it runs out, live entries are renumbered in key order, which keeps every
//!   comparison's outcome and therefore the heap as it is (amortised O(1)).
//! * A handle is `generation · 2²⁶ + slot`, below 2⁵³ (exact in a JS number): 26 bits of
//!   slot (at most 2²⁶ items, twice the 3·10⁷ a queue must hold; a wasm32 memory and a JS
//!   array of values run out not far above that) and 27 of generation, never 0. A slot's
//!   generation goes up each time the slot is reused, so a stale handle never names a
//!   newer entry; after 2²⁷ − 1 uses it would come round again, and the slot is retired
//!   instead, so a handle is never reused while the heap lives.
//! * Each heap starts its generations at its owner's tag (12 bits, e.g. a per-process count
//!   of queues) times 2¹⁵: the tag sits in a handle's high bits. Two heaps whose tags differ
//!   share no handle until one of them has reused a slot 2¹⁵ times, so a handle of one queue
//!   names nothing in the 4,095 queues made after it (or before it).
//! * A slot holds its value beside its heap position and generation, so cancelling or
//!   taking an item touches one slot record, not two arrays (for the wasm binding the value
//!   is `()` and a slot is 8 bytes).
//! * Four children per node make the heap shallower than a binary one (fewer cache
//!   misses on the way down). The arity is a const parameter (default 4) so that
//!   `cargo bench` compares arities on this very heap.

/// Bits of a handle that hold its slot; the generation sits above them.
pub(crate) const SLOT_BITS: u32 = 26;

/// The bits of a handle that hold its slot.
pub(crate) const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;

/// The slot of a handle (its low bits), live or not.
#[inline(always)]
pub(crate) fn slot_in(handle: u64) -> u32 {
    (handle & SLOT_MASK) as u32
}

/// The highest generation (27 bits); generations run 1 ..= MAX_GENERATION, then round to 1.
pub(crate) const MAX_GENERATION: u32 = (1 << 27) - 1;

/// Bits of a tag, at the top of the generation.
const TAG_BITS: u32 = 12;

/// The most slots a heap can hold.
pub(crate) const MAX_SLOTS: usize = 1 << SLOT_BITS;

use alloc::vec;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use crate::chunked::Chunked;

const FREE: u32 = 1 << 31;
const NIL: u32 = FREE - 1;

/// One heap entry: the sort key and the slot it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Entry {
    pub deadline: f64,
    pub seq: u32,
    pub slot: u32,
}

impl Entry {
    /// Earlier deadline first; equal deadlines (-0.0 and 0.0 are equal) in insertion order.
    /// Deadlines are finite and sequence numbers unique, so this is a total order.
    #[inline(always)]
    fn before(&self, other: &Entry) -> bool {
        self.deadline < other.deadline || (self.deadline == other.deadline && self.seq < other.seq)
    }
}

/// Where a slot's entry is in the heap, or, with `FREE` set, the next free slot; and the
/// slot's value, initialised exactly while `FREE` is clear.
struct Slot<V> {
    pos: u32,
    generation: u32,
    value: MaybeUninit<V>,
}

impl<V> Slot<V> {
    #[inline(always)]
    fn is_live(&self) -> bool {
        self.pos & FREE == 0
    }
}

/// An indexed min-heap with `ARITY` children per node; see the module documentation.
pub struct Heap<V, const ARITY: usize = 4> {
    entries: Chunked<Entry>,
    slots: Chunked<Slot<V>>,
    free_head: u32,
    next_seq: u32,
    /// Every slot's first generation; a slot whose next generation would be this one again
    /// is retired.
    first_generation: u32,
}

/// A heap with tag 0 (for benches and tests that use one heap alone).
impl<V, const ARITY: usize> Default for Heap<V, ARITY> {
    fn default() -> Self {
        Self::new(0)
    }
}

impl<V, const ARITY: usize> Drop for Heap<V, ARITY> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<V, const ARITY: usize> Heap<V, ARITY> {
    // Logical position i lives at entries[i + PAD]: ARITY - 1 pad entries put the children of
    // every node (logical 4i+1..=4i+4, physical 4i+4..=4i+7 for arity 4) at a multiple of
    // ARITY, so that with 16-byte entries in 64-byte-aligned chunks they share one cache line.
    const PAD: usize = ARITY - 1;

    /// An empty heap whose handles carry `tag` (taken modulo 2¹²) in their high bits.
    pub fn new(tag: u32) -> Self {
        let first_generation = 1 + ((tag % (1 << TAG_BITS)) << (27 - TAG_BITS));
        Self { entries: Chunked::default(), slots: Chunked::default(), free_head: NIL, next_seq: 0, first_generation }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len().saturating_sub(Self::PAD)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    fn at(&self, i: usize) -> Entry {
        self.entries[i + Self::PAD]
    }

    #[inline]
    pub fn head(&self) -> Option<&Entry> {
        (!self.is_empty()).then(|| &self.entries[Self::PAD])
    }

    /// Live entries in heap order (not sorted).
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        (Self::PAD..self.entries.len()).map(move |i| &self.entries[i])
    }

    /// The entries due by `now` (deadline ≤ now), sorted (FIFO among ties), and the earliest
    /// deadline after `now`, if any. O(d log d) for d entries due: the entries due form the top
    /// of the heap, and the walk stops at each child that is not due.
    pub fn due(&self, now: f64) -> (Vec<Entry>, Option<f64>) {
        let mut due = Vec::new();
        let mut next = f64::INFINITY;
        let n = self.len();
        let mut stack = if n == 0 { Vec::new() } else { vec![0] };
        while let Some(i) = stack.pop() {
            let e = self.at(i);
            if e.deadline > now {
                next = next.min(e.deadline);
                continue;
            }
            due.push(e);
            let first = ARITY * i + 1;
            stack.extend(first..(first + ARITY).min(n));
        }
        sort(&mut due);
        (due, (next != f64::INFINITY).then_some(next))
    }

    /// Packs a live slot's handle.
    #[inline]
    pub fn handle_of(&self, slot: u32) -> u64 {
        (u64::from(self.slots[slot as usize].generation) << SLOT_BITS) | u64::from(slot)
    }

    /// The live slot a handle names, if it is still live.
    #[inline]
    pub fn slot_of(&self, handle: u64) -> Option<u32> {
        let slot = slot_in(handle);
        let generation = handle >> SLOT_BITS;
        if slot as usize >= self.slots.len() || generation > u64::from(MAX_GENERATION) {
            return None;
        }
        let s = &self.slots[slot as usize];
        (u64::from(s.generation) == generation && s.is_live()).then_some(slot)
    }

    /// The entry of a live slot.
    #[inline]
    pub fn entry(&self, slot: u32) -> Entry {
        self.at(self.slots[slot as usize].pos as usize)
    }

    /// The value of a live slot.
    #[inline]
    pub fn value(&self, slot: u32) -> &V {
        let s = &self.slots[slot as usize];
        assert!(s.is_live(), "value of a free slot");
        // SAFETY: a live slot's value is initialised.
        unsafe { s.value.assume_init_ref() }
    }

    /// Inserts a deadline and its value; returns its slot, or gives the value back when
    /// every slot is taken.
    #[inline]
    pub fn insert(&mut self, deadline: f64, value: V) -> Result<u32, V> {
        let slot = self.allocate(value)?;
        let seq = self.take_seq();
        if self.entries.len() == 0 {
            for _ in 0..Self::PAD {
                self.entries.push(Entry { deadline: f64::NEG_INFINITY, seq: 0, slot: u32::MAX });
            }
        }
        let i = self.len();
        let entry = Entry { deadline, seq, slot };
        self.entries.push(entry);
        self.sift_up(i, entry);
        Ok(slot)
    }

    /// Removes and returns the head and its value.
    #[inline]
    pub fn pop(&mut self) -> Option<(Entry, V)> {
        let head = *self.head()?;
        Some((head, self.remove_at(0)))
    }

    /// Removes a live slot's entry; returns it and its value.
    #[inline]
    pub fn remove(&mut self, slot: u32) -> (Entry, V) {
        let i = self.slots[slot as usize].pos as usize;
        let entry = self.at(i);
        (entry, self.remove_at(i))
    }

    /// Gives a live slot a new deadline (and a new sequence number: it queues behind
    /// entries already waiting for the same deadline).
    #[inline]
    pub fn update(&mut self, slot: u32, deadline: f64) {
        let seq = self.take_seq();
        let i = self.slots[slot as usize].pos as usize;
        let entry = Entry { deadline, seq, slot };
        // As in `remove_at`: an entry moved later than where it was cannot rise.
        if i > 0 && entry.before(&self.at(i)) && entry.before(&self.at((i - 1) / ARITY)) {
            self.sift_up(i, entry);
        } else {
            self.sift_down(i, entry);
        }
    }

    /// Removes every entry; slots keep their generations so that old handles stay stale.
    pub fn clear(&mut self) {
        while !self.is_empty() {
            let e = self.entries.pop().expect("a live entry");
            drop(self.release(e.slot));
        }
        self.entries.clear();
    }

    fn remove_at(&mut self, i: usize) -> V {
        let removed = self.at(i);
        let last = self.entries.pop().expect("remove_at on a non-empty heap");
        if i < self.len() {
            // The parent is no later than the removed entry: when `last` is not earlier than
            // that entry it cannot rise, and the parent's cache line need not be read.
            if i > 0 && last.before(&removed) && last.before(&self.at((i - 1) / ARITY)) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
        if self.is_empty() {
            self.entries.clear(); // the pads
        }
        self.release(removed.slot)
    }

    #[inline(always)]
    fn place(&mut self, i: usize, e: Entry) {
        self.entries[i + Self::PAD] = e;
        self.slots[e.slot as usize].pos = i as u32;
    }

    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let p = (i - 1) / ARITY;
            let parent = self.at(p);
            if !e.before(&parent) {
                break;
            }
            self.place(i, parent);
            i = p;
        }
        self.place(i, e);
    }

    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.len();
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let last = (first + ARITY).min(n);
            let mut best = first;
            let mut best_entry = self.at(first);
            for c in first + 1..last {
                let candidate = self.at(c);
                if candidate.before(&best_entry) {
                    best = c;
                    best_entry = candidate;
                }
            }
            if !best_entry.before(&e) {
                break;
            }
            self.place(i, best_entry);
            i = best;
        }
        self.place(i, e);
    }

    /// Takes a free slot (or a new one) for `value`; gives it back when every slot is taken.
    #[inline]
    fn allocate(&mut self, value: V) -> Result<u32, V> {
        if self.free_head != NIL {
            let slot = self.free_head;
            let s = &mut self.slots[slot as usize];
            self.free_head = s.pos & !FREE;
            s.generation = next_generation(s.generation);
            s.pos = 0;
            s.value = MaybeUninit::new(value);
            Ok(slot)
        } else if self.slots.len() < MAX_SLOTS {
            self.slots.push(Slot { pos: 0, generation: self.first_generation, value: MaybeUninit::new(value) });
            Ok((self.slots.len() - 1) as u32)
        } else {
            Err(value)
        }
    }

    /// Frees a live slot and moves its value out.
    #[inline]
    fn release(&mut self, slot: u32) -> V {
        let s = &mut self.slots[slot as usize];
        debug_assert!(s.is_live());
        if next_generation(s.generation) != self.first_generation {
            s.pos = FREE | self.free_head;
            self.free_head = slot;
        } else {
            // Retired: reusing it would repeat a handle.
            s.pos = FREE | NIL;
        }
        // SAFETY: the slot was live, so its value is initialised; it is now marked free,
        // so nothing reads the value again until `allocate` writes a new one.
        unsafe { s.value.assume_init_read() }
    }

    #[inline]
    fn take_seq(&mut self) -> u32 {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Renumbers live entries 0..n in key order. Every pairwise comparison keeps its
    /// outcome, so the heap needs no repair.
    #[cold]
    fn renumber(&mut self) {
        let mut sorted: Vec<Entry> = self.entries().copied().collect();
        sort(&mut sorted);
        for (rank, e) in sorted.into_iter().enumerate() {
            let i = self.slots[e.slot as usize].pos as usize;
            self.entries[Self::PAD + i].seq = rank as u32;
        }
        self.next_seq = self.len() as u32;
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn set_next_seq(&mut self, seq: u32) {
        self.next_seq = seq;
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn first_generation(&self) -> u32 {
        self.first_generation
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn set_generation(&mut self, slot: u32, generation: u32) {
        self.slots[slot as usize].generation = generation;
    }

    /// Checks every invariant; for tests.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn check(&self) {
        for (i, e) in self.entries().enumerate() {
            assert_eq!(self.slots[e.slot as usize].pos as usize, i, "slot position");
            if i > 0 {
                assert!(!e.before(&self.at((i - 1) / ARITY)), "heap order at {i}");
            }
        }
        let live = self.slots.iter().filter(|s| s.is_live()).count();
        assert_eq!(live, self.len(), "live slots");
    }
}

/// Sorts entries in heap order (FIFO among ties): the one sort in the crate. A heapsort
/// (O(n log n), in place) written here rather than `sort_unstable`, whose pattern-defeating
/// quicksort, with its small-sort networks, was a quarter of the wasm every page loads
/// (about 20 kB of 60); it sorts only off the hot paths (the items due for `expired`
/// events, `toArray`, snapshots, a renumbering once per 2³² offers).
pub(crate) fn sort(entries: &mut [Entry]) {
    // A max-heap by `before`, then the largest moved to the end, one at a time.
    fn sift(v: &mut [Entry], mut i: usize, n: usize) {
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                return;
            }
            if child + 1 < n && v[child].before(&v[child + 1]) {
                child += 1;
            }
            if !v[i].before(&v[child]) {
                return;
            }
            v.swap(i, child);
            i = child;
        }
    }
    let n = entries.len();
    for i in (0..n / 2).rev() {
        sift(entries, i, n);
    }
    for end in (1..n).rev() {
        entries.swap(0, end);
        sift(entries, 0, end);
    }
}

#[inline]
fn next_generation(generation: u32) -> u32 {
    if generation == MAX_GENERATION {
        1
    } else {
        generation + 1
    }
}
