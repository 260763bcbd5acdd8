//! The component's exports: wit-bindgen's traits for `tarry:queue/queue`, each method one
//! call into [`Queue`] on the WASI clock.
//!
//! wit-bindgen hands resource methods `&self`; a component instance is never re-entered
//! while one of its calls runs (not even while `take` blocks), so the `RefCell` borrow in
//! each method cannot fail.

use std::cell::RefCell;

use crate::bindings::exports::tarry::queue::queue::{self as wit, Guest, GuestDelayQueue};
use crate::clock::WasiClock;
use crate::queue::Queue;
use crate::{Error, Item, Stats};

struct Component;

impl Guest for Component {
    type DelayQueue = DelayQueue;
}

struct DelayQueue(RefCell<Queue<WasiClock>>);

impl GuestDelayQueue for DelayQueue {
    fn new() -> Self {
        Self(RefCell::new(Queue::new(WasiClock::default())))
    }

    fn bounded(capacity: u32) -> Result<wit::DelayQueue, Error> {
        let queue = Queue::bounded(WasiClock::default(), capacity)?;
        Ok(wit::DelayQueue::new(Self(RefCell::new(queue))))
    }

    fn now(&self) -> f64 {
        self.0.borrow().now()
    }

    fn offer(&self, payload: Vec<u8>, delay_ms: f64) -> Result<u64, Error> {
        self.0.borrow_mut().offer(payload, delay_ms)
    }

    fn offer_at(&self, payload: Vec<u8>, deadline_ms: f64) -> Result<u64, Error> {
        self.0.borrow_mut().offer_at(payload, deadline_ms)
    }

    fn poll(&self) -> Option<Item> {
        self.0.borrow_mut().poll()
    }

    fn take(&self, timeout_ms: f64) -> Result<Option<Item>, Error> {
        self.0.borrow_mut().take(timeout_ms)
    }

    fn drain_expired(&self, max: u32) -> Vec<Item> {
        self.0.borrow_mut().drain_expired(max)
    }

    fn peek(&self) -> Option<Item> {
        self.0.borrow().peek()
    }

    fn next_deadline(&self) -> Option<f64> {
        self.0.borrow().next_deadline()
    }

    fn len(&self) -> u32 {
        self.0.borrow().len()
    }

    fn cancel(&self, handle: u64) -> Option<Vec<u8>> {
        self.0.borrow_mut().cancel(handle)
    }

    fn reschedule(&self, handle: u64, delay_ms: f64) -> Result<bool, Error> {
        self.0.borrow_mut().reschedule(handle, delay_ms)
    }

    fn reschedule_at(&self, handle: u64, deadline_ms: f64) -> Result<bool, Error> {
        self.0.borrow_mut().reschedule_at(handle, deadline_ms)
    }

    fn delay_of(&self, handle: u64) -> Option<f64> {
        self.0.borrow().delay_of(handle)
    }

    fn clear(&self) {
        self.0.borrow_mut().clear();
    }

    fn stats(&self) -> Stats {
        self.0.borrow().stats()
    }
}

crate::bindings::export!(Component with_types_in crate::bindings);
