//! [`Queue`]: the `delay-queue` resource of `wit/tarry.wit`, over the core, host-independent.
//!
//! The core never waits; a component host calls in and waits for the answer. So this layer
//! adds the one thing the core leaves to its driver: [`take`](Queue::take) blocks until the
//! head is due. It keeps the rule of the npm package's host timer: ONE wait at a time, for
//! the earlier of the head's deadline and the take's timeout, never one per item and never
//! a polling loop. The wait is an [`Alarm`]: one pollable of `wasi:clocks/monotonic-clock`
//! in the component ([`crate::clock`]), a manual clock in tests. Nothing can change the head
//! while a take blocks (a component is not re-entered during a call), so a take subscribes
//! again only when it was woken early; the next take subscribes for the head it finds.
//!
//! Everything else is the core's, with the WIT's types: payloads are bytes, refusals are the
//! WIT `error` variant (never a trap), and the message of an `invalid-argument` names the
//! argument as the WIT spells it.

use tarry_queue::{Clock, DelayQueue, Expired, Handle, Refusal, MAX_ITEMS};

use crate::{Error, Item, Stats};

/// A monotonic clock that a caller can also block on until an instant.
pub trait Alarm: Clock {
    /// A wait for one instant; ready from that instant on.
    type Pollable;
    /// A pollable that is ready once [`now`](Clock::now) has reached `at` (ms), never before.
    fn subscribe(&self, at: f64) -> Self::Pollable;
    /// Blocks until `pollable` is ready (at once if it already is).
    fn block(&self, pollable: &Self::Pollable);
}

/// The most items a queue holds, bounded or not: the core's limit (2^26), which is also the
/// npm package's `capacity` bound. `bounded` refuses more rather than cap it silently.
const MAX_CAPACITY: u32 = MAX_ITEMS as u32;

/// A delay queue of byte payloads with a blocking `take`; see the [module documentation](self).
pub struct Queue<A: Alarm> {
    items: DelayQueue<Box<[u8]>, A>,
    wakes: u64,
    early_wakes: u64,
}

impl<A: Alarm> Queue<A> {
    /// An unbounded queue on `alarm`'s clock.
    pub fn new(alarm: A) -> Self {
        Self::with_items(DelayQueue::with_clock(alarm))
    }

    /// A queue that refuses offers once it holds `capacity` items.
    pub fn bounded(alarm: A, capacity: u32) -> Result<Self, Error> {
        if capacity == 0 || capacity > MAX_CAPACITY {
            return Err(invalid(format!(
                "capacity must be between 1 and {MAX_CAPACITY} (2^26, the most a queue holds), got {capacity}"
            )));
        }
        Ok(Self::with_items(DelayQueue::bounded(alarm, capacity as usize)))
    }

    fn with_items(items: DelayQueue<Box<[u8]>, A>) -> Self {
        Self { items, wakes: 0, early_wakes: 0 }
    }

    /// The queue's clock, in ms.
    pub fn now(&self) -> f64 {
        self.items.clock().now()
    }

    /// Offers `payload`, due `delay_ms` from now (negative: already due); its handle.
    pub fn offer(&mut self, payload: Vec<u8>, delay_ms: f64) -> Result<u64, Error> {
        let result = self.items.offer(payload.into_boxed_slice(), delay_ms);
        result.map(Handle::into_raw).map_err(|e| self.refused(e.refusal, "delay-ms", delay_ms))
    }

    /// Offers `payload`, due at `deadline_ms` on the queue's clock; its handle.
    pub fn offer_at(&mut self, payload: Vec<u8>, deadline_ms: f64) -> Result<u64, Error> {
        let result = self.items.offer_at(payload.into_boxed_slice(), deadline_ms);
        result.map(Handle::into_raw).map_err(|e| self.refused(e.refusal, "deadline-ms", deadline_ms))
    }

    /// The head if it is due; never waits.
    pub fn poll(&mut self) -> Option<Item> {
        self.items.poll_expired().map(item)
    }

    /// The expired head, waiting for it up to `timeout_ms` (infinite: until the head is due).
    pub fn take(&mut self, timeout_ms: f64) -> Result<Option<Item>, Error> {
        if timeout_ms.is_nan() {
            return Err(invalid("timeout-ms must be a number of milliseconds, got NaN".into()));
        }
        if timeout_ms < 0.0 {
            return Err(invalid(
                "timeout-ms must not be negative (0: do not wait; infinite: wait for the head)".into(),
            ));
        }
        if timeout_ms == f64::INFINITY && self.items.is_empty() {
            // A component is not re-entered while it blocks: no offer could ever end this wait.
            return Err(invalid(
                "timeout-ms is infinite and the queue is empty: nothing can be offered while take blocks".into(),
            ));
        }
        let until = self.now() + timeout_ms;
        loop {
            if let Some(expired) = self.items.poll_expired() {
                return Ok(Some(item(expired)));
            }
            if self.now() >= until {
                return Ok(None);
            }
            let head = self.items.next_deadline().unwrap_or(f64::INFINITY);
            self.wait_until(head.min(until));
        }
    }

    /// Blocks on one pollable for `at`.
    fn wait_until(&mut self, at: f64) {
        let clock = self.items.clock();
        clock.block(&clock.subscribe(at));
        self.wakes += 1;
        if clock.now() < at {
            // The host woke us early: the caller's loop finds nothing due and waits again.
            self.early_wakes += 1;
        }
    }

    /// Up to `max` expired items, in order.
    pub fn drain_expired(&mut self, max: u32) -> Vec<Item> {
        std::iter::from_fn(|| self.items.poll_expired()).take(max as usize).map(item).collect()
    }

    /// The head, due or not, left in the queue (its payload copied).
    pub fn peek(&self) -> Option<Item> {
        self.items.head().map(|(handle, deadline, payload)| Item {
            handle: handle.into_raw(),
            deadline_ms: deadline,
            payload: payload.to_vec(),
        })
    }

    /// The head's deadline.
    pub fn next_deadline(&self) -> Option<f64> {
        self.items.next_deadline()
    }

    /// Items in the queue, due or not.
    pub fn len(&self) -> u32 {
        // At most MAX_CAPACITY (2^26) items: the core holds no more.
        self.items.len() as u32
    }

    /// Whether the queue holds no item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Removes the item `handle` names and returns its payload; `None` for a stale handle.
    pub fn cancel(&mut self, handle: u64) -> Option<Vec<u8>> {
        self.items.cancel(Handle::from_raw(handle)).map(Vec::from)
    }

    /// Moves the item to `delay_ms` from now; `Ok(false)` for a stale handle.
    pub fn reschedule(&mut self, handle: u64, delay_ms: f64) -> Result<bool, Error> {
        let result = self.items.reschedule(Handle::from_raw(handle), delay_ms);
        result.map_err(|refusal| self.refused(refusal, "delay-ms", delay_ms))
    }

    /// Moves the item to `deadline_ms` on the queue's clock; `Ok(false)` for a stale handle.
    pub fn reschedule_at(&mut self, handle: u64, deadline_ms: f64) -> Result<bool, Error> {
        let result = self.items.reschedule_at(Handle::from_raw(handle), deadline_ms);
        result.map_err(|refusal| self.refused(refusal, "deadline-ms", deadline_ms))
    }

    /// Milliseconds until the item is due (negative when overdue); `None` for a stale handle.
    pub fn delay_of(&self, handle: u64) -> Option<f64> {
        self.items.delay_of(Handle::from_raw(handle))
    }

    /// Removes every item; handles given out stay stale.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The queue's figures: its length and how often `take` woke.
    pub fn stats(&self) -> Stats {
        Stats { len: self.len(), wakes: self.wakes, early_wakes: self.early_wakes }
    }

    /// The WIT `error` for a refusal of the core, naming the argument that caused it.
    fn refused(&self, refusal: Refusal, argument: &str, value: f64) -> Error {
        match refusal {
            Refusal::NotFinite => {
                invalid(format!("{argument} must be a finite number of milliseconds, got {}", non_finite(value)))
            }
            // Full holds `capacity` items, or the core's most (2^26) when unbounded.
            Refusal::Full => Error::Full(self.len()),
        }
    }
}

/// NaN or an infinity as JS spells it, without Rust's float formatting: it alone would add
/// 26 KB to the component.
fn non_finite(value: f64) -> &'static str {
    match value {
        f64::INFINITY => "Infinity",
        f64::NEG_INFINITY => "-Infinity",
        _ => "NaN",
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidArgument(message)
}

fn item(expired: Expired<Box<[u8]>>) -> Item {
    Item { handle: expired.handle.into_raw(), deadline_ms: expired.deadline, payload: expired.value.into_vec() }
}
