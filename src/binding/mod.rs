//! The WebAssembly binding: [`Deadlines`], the wasm half of a JS queue or scheduler.
//!
//! It holds the deadlines of the items in order, the deadlines of waits that give up, and
//! the figures, through a [`Driver`]; the JS face holds the values, the clock and the one
//! host timer. Data flows one way: JS calls in with numbers (a deadline, a handle, the time
//! it read) and gets numbers back (a handle, a deadline, when its timer should fire). The
//! binding reads no clock and calls no JS function, so no JS code runs while Rust holds a
//! borrow of a queue, and a JS exception (a host refusing a timer, a stack overflow in JS)
//! cannot leave one half-changed.
//!
//! Values stay in a JS array indexed by slot (`js/memory/slots.js`), because storing a `JsValue`
//! in Rust costs a trip through wasm-bindgen's externref table on every offer and cancel.
//! JS names an item by its handle (what `offer` returned); the binding hands items out
//! (`poll`, `takeDue`, `head`, `drain`, `sortedSlots`) by slot, a small integer, because a
//! handle above 2³¹ would come back to JS as a heap-allocated number on every call, and a
//! small integer does not. `slotMask` tells the slot table, the only JS that knows slots,
//! which bits of a handle are its slot.
//!
//! The global allocator of the wasm build, and how it grows the memory, is [`growth`].
//!
//! Time: each call that needs it is handed `now`, read by the JS face from its one clock;
//! the binding keeps the latest such reading (a [`ManualClock`] moved forward), so that
//! anything due by a time it was told about counts as due.

mod growth;

/// A panic (a broken invariant, never bad input: the binding checks what JS hands it)
/// traps, which JS sees as a `RuntimeError`. No message is formatted, so the module carries
/// no formatting code.
#[cfg(not(feature = "std"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;

use wasm_bindgen::prelude::*;

use crate::heap::{slot_in, SLOT_MASK};
use crate::{DelayQueue, Driver, Handle, ManualClock, Refusal, MAX_ITEMS};

/// Why an offer was refused, as `offer` returns it in place of a handle. Handles are at
/// least 2²⁶, so a refusal is never read as one.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue holds as many items as it may (its capacity, or `maxItems`).
    Full = -1,
    /// The deadline was NaN or infinite.
    NotFinite = -2,
}

impl From<Refusal> for Refused {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Full => Refused::Full,
            Refusal::NotFinite => Refused::NotFinite,
        }
    }
}

/// What calls that hand an item out return when there is none: never a slot.
const NO_SLOT: i32 = -1;

/// The deadlines of one queue's items and waits; see the [module documentation](self).
#[wasm_bindgen]
pub struct Deadlines {
    clock: Rc<ManualClock>,
    driver: Driver<(), Rc<ManualClock>>,
    bounded: bool,
    /// The deadline of the item handed out last (by `poll` or `takeDue`).
    last_deadline: f64,
    /// What the last `expiredSlots` found after the items it returned.
    next_after_expired: f64,
}

/// A handle from JS, if it is one a queue could have given out.
#[inline]
fn handle(raw: f64) -> Option<Handle> {
    ((0.0..9_007_199_254_740_992.0).contains(&raw) && (raw as u64) as f64 == raw).then(|| Handle::from_raw(raw as u64))
}

#[inline]
fn raw(handle: Handle) -> f64 {
    handle.into_raw() as f64
}

/// The slot of a handle the core gave out (heap.rs knows which bits).
#[inline]
fn slot(handle: Handle) -> i32 {
    slot_in(handle.into_raw()) as i32
}

#[wasm_bindgen]
impl Deadlines {
    /// `capacity`: a whole number from 1 to `maxItems`, or Infinity for unbounded.
    #[wasm_bindgen(constructor)]
    pub fn new(capacity: f64) -> Deadlines {
        let bounded = capacity.is_finite();
        let capacity = if bounded { capacity.max(0.0) as usize } else { MAX_ITEMS };
        let clock = Rc::new(ManualClock::new(f64::NEG_INFINITY));
        let driver = Driver::new(DelayQueue::bounded(clock.clone(), capacity));
        Deadlines { clock, driver, bounded, last_deadline: f64::NAN, next_after_expired: f64::INFINITY }
    }

    /// The most items a queue holds, bounded or not.
    #[wasm_bindgen(js_name = maxItems)]
    pub fn max_items() -> f64 {
        MAX_ITEMS as f64
    }

    /// The bits of a handle that are its slot (`handle & slotMask`).
    #[wasm_bindgen(js_name = slotMask)]
    pub fn slot_mask() -> u32 {
        SLOT_MASK as u32
    }

    /// Offers an item due at `deadline`; its handle, or a [`Refused`] value (below 0).
    pub fn offer(&mut self, deadline: f64) -> f64 {
        match self.driver.items_mut().offer_at((), deadline) {
            Ok(h) => raw(h),
            Err(e) => Refused::from(e.refusal) as i32 as f64,
        }
    }

    /// Offers one item due at `now + delays[i]` for each delay; their handles in order, or
    /// none at all (and nothing offered) when they do not all fit or one is not finite.
    #[wasm_bindgen(js_name = offerMany)]
    pub fn offer_many(&mut self, now: f64, delays: &[f64]) -> Vec<f64> {
        let items = self.driver.items_mut();
        let mut handles = Vec::with_capacity(delays.len());
        for d in delays {
            match items.offer_at((), now + d) {
                Ok(h) => handles.push(h),
                Err(_) => {
                    for h in handles {
                        items.cancel(h);
                    }
                    return Vec::new();
                }
            }
        }
        handles.into_iter().map(raw).collect()
    }

    /// Removes an item; false when the handle names nothing here.
    pub fn cancel(&mut self, handle_raw: f64) -> bool {
        handle(handle_raw).is_some_and(|h| self.driver.items_mut().cancel(h).is_some())
    }

    /// Moves an item's deadline to `deadline`; false when the handle names nothing here.
    pub fn reschedule(&mut self, handle_raw: f64, deadline: f64) -> bool {
        handle(handle_raw).is_some_and(|h| self.driver.items_mut().reschedule_at(h, deadline) == Ok(true))
    }

    /// Moves an item's deadline to `deadline` if that is later than its own (`ifExists:
    /// "extend"`); false when it did not move (due no earlier, or the handle names nothing).
    pub fn extend(&mut self, handle_raw: f64, deadline: f64) -> bool {
        handle(handle_raw).is_some_and(|h| self.driver.items_mut().extend_at(h, deadline) == Ok(true))
    }

    /// An item's deadline, or NaN when the handle names nothing here.
    #[wasm_bindgen(js_name = deadlineOf)]
    pub fn deadline_of(&self, handle_raw: f64) -> f64 {
        handle(handle_raw).and_then(|h| self.driver.items().deadline_of(h)).unwrap_or(f64::NAN)
    }

    /// The head's slot (due or not), or -1 when empty.
    pub fn head(&self) -> i32 {
        self.driver.items().head().map_or(NO_SLOT, |(h, _, _)| slot(h))
    }

    /// Takes the head if it is due by `now` (or by any earlier time handed in); its slot,
    /// or -1. Not a wait: no lateness is recorded.
    pub fn poll(&mut self, now: f64) -> i32 {
        self.clock.advance_to(now);
        match self.driver.items_mut().poll_expired() {
            Some(e) => {
                self.last_deadline = e.deadline;
                slot(e.handle)
            }
            None => NO_SLOT,
        }
    }

    /// For a waiter: like `poll`, and records how late the item goes out.
    #[wasm_bindgen(js_name = takeDue)]
    pub fn take_due(&mut self, now: f64) -> i32 {
        self.clock.advance_to(now);
        match self.driver.take() {
            Some(e) => {
                self.last_deadline = e.deadline;
                slot(e.handle)
            }
            None => NO_SLOT,
        }
    }

    /// The deadline of the item that `poll` or `takeDue` handed out last (NaN before any).
    #[wasm_bindgen(getter, js_name = lastDeadline)]
    pub fn last_deadline(&self) -> f64 {
        self.last_deadline
    }

    /// The slots of the items due by `now`, in deadline order, without taking any; then
    /// `nextAfterExpired` is the earliest deadline of the others (Infinity for none).
    /// O(d log d) for d items due.
    #[wasm_bindgen(js_name = expiredSlots)]
    pub fn expired_slots(&mut self, now: f64) -> Vec<i32> {
        self.clock.advance_to(now);
        let (due, next) = self.driver.items_mut().expired();
        self.next_after_expired = next.unwrap_or(f64::INFINITY);
        due.into_iter().map(|(h, _)| slot(h)).collect()
    }

    /// See `expiredSlots`.
    #[wasm_bindgen(getter, js_name = nextAfterExpired)]
    pub fn next_after_expired(&self) -> f64 {
        self.next_after_expired
    }

    /// Takes up to `max` items due by `now`, in order; their slots.
    pub fn drain(&mut self, now: f64, max: f64) -> Vec<i32> {
        self.clock.advance_to(now);
        let items = self.driver.items_mut();
        let mut out = Vec::new();
        while (out.len() as f64) < max {
            match items.poll_expired() {
                Some(e) => out.push(slot(e.handle)),
                None => break,
            }
        }
        out
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.driver.items().len() as u32
    }

    /// Room left; Infinity when unbounded.
    #[wasm_bindgen(getter, js_name = remainingCapacity)]
    pub fn remaining_capacity(&self) -> f64 {
        if self.bounded {
            self.driver.items().remaining_capacity() as f64
        } else {
            f64::INFINITY
        }
    }

    /// Removes every item (take-timeouts stay).
    pub fn clear(&mut self) {
        self.driver.items_mut().clear();
    }

    /// Every item's slot in deadline order (FIFO among ties).
    #[wasm_bindgen(js_name = sortedSlots)]
    pub fn sorted_slots(&self) -> Vec<i32> {
        self.driver.items().iter_sorted().map(|(h, _, _)| slot(h)).collect()
    }

    /// Every item's deadline, in the order of `sortedSlots`.
    #[wasm_bindgen(js_name = sortedDeadlines)]
    pub fn sorted_deadlines(&self) -> Vec<f64> {
        self.driver.items().iter_sorted().map(|(_, d, _)| d).collect()
    }

    /// A wait that gives up at `deadline`; its handle (in a space of its own), or a
    /// [`Refused`] value when `deadline` is not finite.
    #[wasm_bindgen(js_name = addTimeout)]
    pub fn add_timeout(&mut self, deadline: f64) -> f64 {
        self.driver.add_timeout(deadline).map_or_else(|r| Refused::from(r) as i32 as f64, raw)
    }

    /// Forgets a take-timeout (its wait ended otherwise).
    #[wasm_bindgen(js_name = cancelTimeout)]
    pub fn cancel_timeout(&mut self, handle_raw: f64) -> bool {
        handle(handle_raw).is_some_and(|h| self.driver.cancel_timeout(h))
    }

    /// Removes a take-timeout expired by `now`, earliest first; its slot, or -1.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&mut self, now: f64) -> i32 {
        self.clock.advance_to(now);
        self.driver.poll_timeout().map_or(NO_SLOT, slot)
    }

    /// When the one host timer should fire (a deadline), or Infinity for never: while
    /// something waits, the earliest item or take-timeout; while nothing waits, never.
    #[wasm_bindgen(js_name = wakeAt)]
    pub fn wake_at(&self, waiting: bool) -> f64 {
        self.driver.wake_at(waiting).unwrap_or(f64::INFINITY)
    }

    /// The host timer fired at `now`: whether anything is due (if not, the wake-up was early).
    pub fn fired(&mut self, now: f64) -> bool {
        self.clock.advance_to(now);
        self.driver.fired()
    }

    /// The figures a queue's `stats` shows beside the JS face's own, as numbers in this
    /// order (js/memory/timeline.js names them): wake-ups, early ones, items handed to waiters, and
    /// their lateness p50, p99 and max in ms. Numbers, not an object: building a JS object
    /// from Rust would bring serde into every page's wasm for one call.
    pub fn figures(&self) -> Vec<f64> {
        let l = self.driver.lateness();
        vec![
            self.driver.wakes() as f64,
            self.driver.early_wakes() as f64,
            l.count() as f64,
            l.quantile(0.5),
            l.quantile(0.99),
            l.max(),
        ]
    }
}

#[cfg(test)]
mod tests {
    //! The binding under a JS host (Node, via wasm-bindgen-test): numbers in, numbers out.

    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn slot_of(h: f64) -> i32 {
        (h as u64 & u64::from(Deadlines::slot_mask())) as i32
    }

    #[wasm_bindgen_test]
    fn numbers_in_numbers_out() {
        let mut d = Deadlines::new(f64::INFINITY);
        let late = d.offer(1050.0);
        let due = d.offer(999.0);
        assert!(late >= 2f64.powi(26) && late < 2f64.powi(53));
        assert_ne!(slot_of(late), slot_of(due));
        assert_eq!(d.size(), 2);
        assert_eq!(d.head(), slot_of(due));
        assert_eq!(d.poll(1000.0), slot_of(due));
        assert_eq!(d.poll(1000.0), NO_SLOT, "the other item is not due");
        assert_eq!(d.poll(f64::NEG_INFINITY), NO_SLOT, "time does not go back");
        assert!(d.cancel(late));
        assert!(!d.cancel(late), "stale");
        for bad in [-1.0, 0.5, f64::NAN, 2f64.powi(60)] {
            assert!(!d.cancel(bad));
            assert!(d.deadline_of(bad).is_nan());
            assert!(!d.reschedule(bad, 1.0));
            assert!(!d.extend(bad, 1.0));
        }
        assert_eq!(d.offer(f64::NAN), Refused::NotFinite as i32 as f64);
        assert_eq!(d.size(), 0);
        assert_eq!(d.head(), NO_SLOT);
    }

    #[wasm_bindgen_test]
    fn refusals_are_told_apart() {
        let mut d = Deadlines::new(1.0);
        assert!(d.offer(1.0) > 0.0);
        assert_eq!(d.offer(1.0), Refused::Full as i32 as f64);
        assert_eq!(d.offer(f64::INFINITY), Refused::NotFinite as i32 as f64);
        assert_eq!(d.remaining_capacity(), 0.0);
        assert_eq!(Deadlines::new(f64::INFINITY).remaining_capacity(), f64::INFINITY);
        assert!(d.offer_many(0.0, &[1.0]).is_empty(), "a batch that does not fit adds nothing");
        assert_eq!(d.size(), 1);
    }

    #[wasm_bindgen_test]
    fn wakes_for_the_earliest_deadline_only_while_something_waits() {
        let mut d = Deadlines::new(f64::INFINITY);
        d.offer(10_000.0);
        assert_eq!(d.wake_at(false), f64::INFINITY);
        assert_eq!(d.wake_at(true), 10_000.0);
        let t = d.add_timeout(500.0);
        assert_eq!(d.wake_at(true), 500.0);
        assert!(!d.fired(499.0), "early");
        assert_eq!(d.poll_timeout(499.0), NO_SLOT);
        assert!(d.fired(500.0));
        assert_eq!(d.poll_timeout(500.0), slot_of(t));
        assert_eq!(d.take_due(500.0), NO_SLOT, "the item stays");
        assert_eq!(d.size(), 1);
        let item = d.head();
        assert_eq!(d.take_due(10_003.0), item);
        let f = d.figures();
        assert_eq!((f[0], f[1], f[2], f[5]), (2.0, 1.0, 1.0, 3.0), "wakes, early, delivered, max lateness");
    }

    #[wasm_bindgen_test]
    fn expired_slots_leave_the_items_and_say_what_comes_next() {
        let mut d = Deadlines::new(f64::INFINITY);
        let late = d.offer(300.0);
        let b = d.offer(100.0);
        let a = d.offer(50.0);
        assert_eq!(d.expired_slots(100.0), [slot_of(a), slot_of(b)]);
        assert_eq!(d.next_after_expired(), 300.0);
        assert_eq!(d.size(), 3, "nothing taken");
        assert!(d.last_deadline().is_nan());
        assert_eq!(d.take_due(100.0), slot_of(a));
        assert_eq!(d.last_deadline(), 50.0);
        assert_eq!(d.poll(100.0), slot_of(b));
        assert_eq!(d.last_deadline(), 100.0);
        assert!(d.expired_slots(100.0).is_empty());
        assert_eq!(d.expired_slots(300.0), [slot_of(late)]);
        assert_eq!(d.next_after_expired(), f64::INFINITY);
    }
}
