//! [`DelayQueue`]: items that become available only when their delay has expired.
//!
//! The same contract as Java's `java.util.concurrent.DelayQueue`, without its locks:
//! the head is the item whose deadline is earliest, [`poll`](DelayQueue::poll) hands it
//! out only once its deadline has passed, and [`len`](DelayQueue::len) counts expired and
//! unexpired items alike. What it adds:
//!
//! * **Handles.** [`offer`](DelayQueue::offer) returns a [`Handle`]; [`cancel`](DelayQueue::cancel)
//!   and [`reschedule`](DelayQueue::reschedule) by handle are O(log n), where Java's
//!   `remove(Object)` scans in O(n). A stale handle names nothing, never another item,
//!   and a handle of one queue names nothing in the thousands of queues made around it.
//! * **FIFO ties.** Items with equal deadlines come out in the order they were offered.
//! * **Monotonic time.** Delays are measured on a [`Clock`]; the queue never reads the
//!   wall clock. The queue never waits itself: whoever drives it (a thread, a host timer)
//!   asks [`next_deadline`](DelayQueue::next_deadline) when to come back.
//!
//! Costs: offer, poll, cancel and reschedule O(log n); peek and `next_deadline` O(1);
//! a 16-byte heap entry and an 8-byte slot record per pending item plus the value, grown
//! and given back in chunks of 4096. At most [`MAX_ITEMS`] items.
//!
//! ```
//! use tarry_queue::{DelayQueue, ManualClock};
//! use std::rc::Rc;
//!
//! let clock = Rc::new(ManualClock::new(0.0));
//! let mut q = DelayQueue::with_clock(clock.clone());
//! let late = q.offer("late", 200.0).unwrap();
//! q.offer("soon", 100.0).unwrap();
//! assert_eq!(q.poll(), None);            // nothing has expired yet
//! clock.advance(150.0);
//! assert_eq!(q.poll(), Some("soon"));
//! assert_eq!(q.cancel(late), Some("late")); // the order was paid
//! assert!(q.is_empty());
//! ```

use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::clock::Clock;
use crate::heap::{Heap, MAX_SLOTS};

/// The most items a queue holds, bounded or not (2²⁶).
pub const MAX_ITEMS: usize = MAX_SLOTS;

/// Queues made so far in this process: each queue's number tags its handles.
static QUEUES: AtomicU32 = AtomicU32::new(0);

/// Names one offered item. Plain data: store it beside the item's id and use it later
/// to cancel or reschedule. Its raw value is an integer from 2²⁶ up to below 2⁵³, so it
/// survives a round trip through a JS number or JSON. It names nothing once its item has
/// left, and nothing in another queue made within 4,095 queues of its own (the queue's
/// number sits in its high bits; `src/heap.rs` has the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle(u64);

impl Handle {
    /// The handle as an integer (below 2⁵³).
    pub fn into_raw(self) -> u64 {
        self.0
    }

    /// A handle from [`into_raw`](Handle::into_raw). Any integer is accepted; one that
    /// names no live item simply finds nothing.
    pub fn from_raw(raw: u64) -> Self {
        Handle(raw)
    }
}

/// Why an offer was refused. The queue is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The delay or deadline was NaN or infinite.
    NotFinite,
    /// A bounded queue has no room left.
    Full,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::NotFinite => "the delay must be a finite number of milliseconds",
            Refusal::Full => "the queue is full",
        })
    }
}

impl core::error::Error for Refusal {}

/// A refused offer: the reason, and the value handed back.
pub struct OfferError<T> {
    pub refusal: Refusal,
    pub value: T,
}

impl<T> fmt::Debug for OfferError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OfferError").field("refusal", &self.refusal).finish_non_exhaustive()
    }
}

impl<T> fmt::Display for OfferError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.refusal.fmt(f)
    }
}

impl<T> core::error::Error for OfferError<T> {}

/// An item taken out of the queue, with what the queue knew about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expired<T> {
    pub handle: Handle,
    /// Its deadline on the queue's clock.
    pub deadline: f64,
    pub value: T,
}

/// A delay queue; see the [module documentation](self).
pub struct DelayQueue<T, C> {
    heap: Heap<T>,
    clock: C,
    capacity: usize,
    // A past clock reading: anything due by then is due now (the clock is monotonic),
    // so polling a run of expired items reads the clock once, not once per item.
    seen: f64,
}

#[cfg(not(target_arch = "wasm32"))]
impl<T> DelayQueue<T, crate::clock::SystemClock> {
    /// An unbounded queue on the process's monotonic clock.
    pub fn new() -> Self {
        Self::with_clock(crate::clock::SystemClock::default())
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl<T> Default for DelayQueue<T, crate::clock::SystemClock> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, C: Clock> DelayQueue<T, C> {
    /// An unbounded queue on the given clock.
    pub fn with_clock(clock: C) -> Self {
        Self::bounded(clock, usize::MAX)
    }

    /// A queue that refuses offers once it holds `capacity` items (at most [`MAX_ITEMS`]).
    pub fn bounded(clock: C, capacity: usize) -> Self {
        let tag = QUEUES.fetch_add(1, Ordering::Relaxed);
        Self { heap: Heap::new(tag), clock, capacity: capacity.min(MAX_ITEMS), seen: f64::NEG_INFINITY }
    }

    /// An unbounded queue whose handles never leave the crate: it takes no queue number.
    pub(crate) fn untagged(clock: C) -> Self {
        Self { heap: Heap::new(0), clock, capacity: MAX_ITEMS, seen: f64::NEG_INFINITY }
    }

    /// The clock the queue reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Items in the queue, expired or not.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.len() == 0
    }

    /// The bound given to [`bounded`](Self::bounded), at most [`MAX_ITEMS`] (which is also
    /// what an unbounded queue reports).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Room left before offers are refused.
    pub fn remaining_capacity(&self) -> usize {
        self.capacity - self.len()
    }

    /// Offers `value`, due `delay` ms from now. A negative delay means already expired.
    #[inline]
    pub fn offer(&mut self, value: T, delay: f64) -> Result<Handle, OfferError<T>> {
        if !delay.is_finite() {
            return Err(OfferError { refusal: Refusal::NotFinite, value });
        }
        let now = self.read_clock();
        self.offer_at(value, now + delay)
    }

    /// Offers `value`, due at `deadline` on the queue's clock.
    #[inline]
    pub fn offer_at(&mut self, value: T, deadline: f64) -> Result<Handle, OfferError<T>> {
        if !deadline.is_finite() {
            return Err(OfferError { refusal: Refusal::NotFinite, value });
        }
        if self.len() >= self.capacity {
            return Err(OfferError { refusal: Refusal::Full, value });
        }
        match self.heap.insert(deadline, value) {
            Ok(slot) => Ok(Handle(self.heap.handle_of(slot))),
            Err(value) => Err(OfferError { refusal: Refusal::Full, value }),
        }
    }

    /// Removes and returns the head if its deadline has passed.
    #[inline]
    pub fn poll(&mut self) -> Option<T> {
        self.poll_expired().map(|e| e.value)
    }

    /// Like [`poll`](Self::poll), with the item's handle and deadline.
    #[inline]
    pub fn poll_expired(&mut self) -> Option<Expired<T>> {
        let deadline = self.heap.head()?.deadline;
        if deadline > self.seen && deadline > self.read_clock() {
            return None;
        }
        let (entry, value) = self.heap.pop()?;
        // Release left the slot's generation as it was, so this is the handle it had.
        let handle = Handle(self.heap.handle_of(entry.slot));
        Some(Expired { handle, deadline: entry.deadline, value })
    }

    /// Removes up to `max` expired items, in order.
    pub fn drain_expired(&mut self, max: usize) -> Vec<T> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.poll() {
                Some(v) => out.push(v),
                None => break,
            }
        }
        out
    }

    /// The head, expired or not.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        let head = self.heap.head()?;
        Some(self.heap.value(head.slot))
    }

    /// The head with its handle and deadline, expired or not.
    #[inline]
    pub fn head(&self) -> Option<(Handle, f64, &T)> {
        let head = self.heap.head()?;
        Some((Handle(self.heap.handle_of(head.slot)), head.deadline, self.heap.value(head.slot)))
    }

    /// The head's deadline on the queue's clock: when the driver should next look.
    #[inline]
    pub fn next_deadline(&self) -> Option<f64> {
        self.heap.head().map(|e| e.deadline)
    }

    /// Removes the item a handle names; `None` if it is gone (taken, cancelled) or unknown.
    #[inline]
    pub fn cancel(&mut self, handle: Handle) -> Option<T> {
        let slot = self.heap.slot_of(handle.0)?;
        Some(self.heap.remove(slot).1)
    }

    /// Whether a handle names an item still in the queue.
    pub fn contains(&self, handle: Handle) -> bool {
        self.heap.slot_of(handle.0).is_some()
    }

    /// Moves an item's deadline to `delay` ms from now. `Ok(false)` if the handle names
    /// nothing; the handle stays valid. An item rescheduled to a deadline that others
    /// already share queues behind them.
    pub fn reschedule(&mut self, handle: Handle, delay: f64) -> Result<bool, Refusal> {
        if !delay.is_finite() {
            return Err(Refusal::NotFinite);
        }
        let now = self.read_clock();
        self.reschedule_at(handle, now + delay)
    }

    /// Moves an item's deadline to `deadline` on the queue's clock.
    pub fn reschedule_at(&mut self, handle: Handle, deadline: f64) -> Result<bool, Refusal> {
        if !deadline.is_finite() {
            return Err(Refusal::NotFinite);
        }
        match self.heap.slot_of(handle.0) {
            Some(slot) => {
                self.heap.update(slot, deadline);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Moves an item's deadline to `deadline` only if that is later than its own: a
    /// debounce (an offer with `ifExists: "extend"`). `Ok(true)` if it moved (behind the
    /// items already due then, as [`reschedule_at`](Self::reschedule_at) moves it);
    /// `Ok(false)` if it was due no earlier, and then it keeps its deadline and its place
    /// among equal deadlines, or if the handle names nothing. O(log n).
    ///
    /// ```
    /// use tarry_queue::{DelayQueue, ManualClock};
    /// use std::rc::Rc;
    ///
    /// let mut q = DelayQueue::with_clock(Rc::new(ManualClock::new(0.0)));
    /// let h = q.offer_at("save", 100.0).unwrap();
    /// assert_eq!(q.extend_at(h, 300.0), Ok(true));  // another keystroke: later
    /// assert_eq!(q.extend_at(h, 200.0), Ok(false)); // an earlier deadline changes nothing
    /// assert_eq!(q.deadline_of(h), Some(300.0));
    /// ```
    pub fn extend_at(&mut self, handle: Handle, deadline: f64) -> Result<bool, Refusal> {
        if !deadline.is_finite() {
            return Err(Refusal::NotFinite);
        }
        match self.heap.slot_of(handle.0) {
            Some(slot) if deadline > self.heap.entry(slot).deadline => {
                self.heap.update(slot, deadline);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The deadline of the item a handle names, on the queue's clock.
    pub fn deadline_of(&self, handle: Handle) -> Option<f64> {
        let slot = self.heap.slot_of(handle.0)?;
        Some(self.heap.entry(slot).deadline)
    }

    /// Milliseconds until the item is due (negative when overdue).
    pub fn delay_of(&self, handle: Handle) -> Option<f64> {
        let deadline = self.deadline_of(handle)?;
        Some(deadline - self.clock.now())
    }

    /// Removes every item. Handles given out so far stay stale forever.
    pub fn clear(&mut self) {
        self.heap.clear();
    }

    /// The items whose deadline has passed, in deadline order (FIFO among ties), without
    /// removing any, and the earliest deadline among the others. O(d log d) for d expired items.
    pub fn expired(&mut self) -> (Vec<(Handle, f64)>, Option<f64>) {
        let now = self.read_clock();
        let (due, next) = self.heap.due(now);
        (due.into_iter().map(|e| (Handle(self.heap.handle_of(e.slot)), e.deadline)).collect(), next)
    }

    /// Every item in deadline order (FIFO among ties), without removing anything. O(n log n).
    pub fn iter_sorted(&self) -> impl Iterator<Item = (Handle, f64, &T)> {
        let mut entries: Vec<_> = self.heap.entries().copied().collect();
        crate::heap::sort(&mut entries);
        entries.into_iter().map(move |e| (Handle(self.heap.handle_of(e.slot)), e.deadline, self.heap.value(e.slot)))
    }

    #[inline]
    fn read_clock(&mut self) -> f64 {
        let now = self.clock.now();
        if now > self.seen {
            self.seen = now;
        }
        self.seen
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub(crate) fn heap_mut(&mut self) -> &mut Heap<T> {
        &mut self.heap
    }

    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub(crate) fn check(&self) {
        self.heap.check();
    }
}

impl<T: fmt::Debug, C: Clock> fmt::Debug for DelayQueue<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter_sorted().map(|(_, d, v)| (d, v))).finish()
    }
}
