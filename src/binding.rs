//! The WebAssembly binding: the core [`DelayQueue`] for JS, and the one host timer.
//!
//! Only numbers cross the boundary. Values stay in a JS array indexed by slot (the low
//! 32 bits of a handle), because storing a `JsValue` in Rust costs a trip through
//! wasm-bindgen's externref table on every offer and cancel (see `../shared/REFERENCE.md`).
//!
//! The timer replaces Java's leader thread and condition variable. [`Core::settle`] runs
//! after every change and keeps this rule: while someone waits, exactly one host timer
//! is armed, for the earliest of the head's deadline and the earliest take-timeout;
//! otherwise none. A timer that fires early, or that was chained because the wait is
//! longer than the host's 2³¹−1 ms limit, finds nothing due and is simply armed again.
//! The JS face decides what a wake-up does (hand items to takers); the binding decides
//! when one happens.

use js_sys::Function;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::{Clock, DelayQueue, Handle, Lateness};

#[wasm_bindgen(module = "/js/host.js")]
extern "C" {
    #[wasm_bindgen(js_name = armTimer)]
    fn arm_timer(callback: &Function, ms: f64, keep_alive: bool) -> JsValue;
    #[wasm_bindgen(js_name = disarmTimer)]
    fn disarm_timer(id: &JsValue);
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// `performance.now()`: monotonic, in the host's global scope.
pub struct HostClock;

impl Clock for HostClock {
    #[inline]
    fn now(&self) -> f64 {
        performance_now()
    }
}

/// The longest single wait a host timer accepts (2³¹−1 ms, about 24.8 days).
const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// The one host timer of a queue.
#[derive(Default)]
struct Timer {
    id: Option<JsValue>,
    /// The deadline it was armed for (a chained timer fires before it).
    target: f64,
    arms: u64,
}

/// Figures of a queue, as its `stats` getter shows them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Stats {
    size: usize,
    takers: u32,
    timers_armed: u32,
    timer_arms: u64,
    wakes: u64,
    early_wakes: u64,
    /// Items handed to take() calls, and their lateness below.
    delivered: u64,
    lateness_p50: f64,
    lateness_p99: f64,
    lateness_max: f64,
}

#[wasm_bindgen]
pub struct Core {
    items: DelayQueue<(), HostClock>,
    /// Deadlines of takes that wait with a timeout.
    timeouts: DelayQueue<(), HostClock>,
    takers: u32,
    /// What the timer calls; held only while someone waits, so that an idle queue holds
    /// no reference from wasm back to its JS object and can be garbage-collected.
    wake: Option<Function>,
    keep_alive: bool,
    timer: Timer,
    wakes: u64,
    early_wakes: u64,
    lateness: Lateness,
}

/// A handle from JS, if it is one the core could have given out.
#[inline]
fn handle(raw: f64) -> Option<Handle> {
    ((0.0..9_007_199_254_740_992.0).contains(&raw) && raw.fract() == 0.0).then(|| Handle::from_raw(raw as u64))
}

#[inline]
fn slot(handle: Handle) -> i32 {
    (handle.into_raw() & 0xFFFF_FFFF) as i32
}

#[wasm_bindgen]
impl Core {
    /// `capacity` < 0 means unbounded.
    #[wasm_bindgen(constructor)]
    pub fn new(capacity: f64, keep_alive: bool) -> Core {
        let capacity = if capacity < 0.0 { usize::MAX } else { capacity as usize };
        Core {
            items: DelayQueue::bounded(HostClock, capacity),
            timeouts: DelayQueue::with_clock(HostClock),
            takers: 0,
            wake: None,
            keep_alive,
            timer: Timer::default(),
            wakes: 0,
            early_wakes: 0,
            lateness: Lateness::default(),
        }
    }

    /// Offers an item due in `delay` ms, reading the clock in wasm (the JS face reads it
    /// itself and calls `offerAt`, which is cheaper); its handle, or -1 when full or `delay`
    /// is not finite.
    pub fn offer(&mut self, delay: f64) -> f64 {
        self.offer_at(HostClock.now() + delay)
    }

    /// Offers an item due at `deadline` on `performance.now()`'s clock.
    #[wasm_bindgen(js_name = offerAt)]
    pub fn offer_at(&mut self, deadline: f64) -> f64 {
        match self.items.offer_at((), deadline) {
            Ok(h) => {
                self.settle();
                h.into_raw() as f64
            }
            Err(_) => -1.0,
        }
    }

    /// Offers one item due at `now + delay` for each delay: one clock reading for the
    /// batch. The handles, in order; the caller has checked the delays and the room.
    #[wasm_bindgen(js_name = offerMany)]
    pub fn offer_many(&mut self, now: f64, delays: &[f64]) -> Vec<f64> {
        let handles =
            delays.iter().map(|d| self.items.offer_at((), now + d).map_or(-1.0, |h| h.into_raw() as f64)).collect();
        self.settle();
        handles
    }

    /// Takes the expired head; its slot, or -1.
    pub fn poll(&mut self) -> i32 {
        match self.items.poll_expired() {
            Some(e) => {
                self.settle();
                slot(e.handle)
            }
            None => -1,
        }
    }

    /// Takes up to `max` expired items, in order; their slots.
    pub fn drain(&mut self, max: f64) -> Vec<u32> {
        let mut slots = Vec::new();
        while (slots.len() as f64) < max {
            match self.items.poll_expired() {
                Some(e) => slots.push(slot(e.handle) as u32),
                None => break,
            }
        }
        self.settle();
        slots
    }

    /// For a take(): takes the expired head and records how late it is handed out; the
    /// slot, or -1. On a wake-up the caller settles once it has handed out what it can.
    #[wasm_bindgen(js_name = takeDue)]
    pub fn take_due(&mut self) -> i32 {
        match self.items.poll_expired() {
            Some(e) => {
                self.lateness.record(HostClock.now() - e.deadline);
                slot(e.handle)
            }
            None => -1,
        }
    }

    /// The head's slot (expired or not), or -1.
    #[wasm_bindgen(js_name = peekSlot)]
    pub fn peek_slot(&self) -> i32 {
        self.items.head().map_or(-1, |(h, _, _)| slot(h))
    }

    /// Removes an item; its slot, or -1 when the handle names nothing.
    pub fn cancel(&mut self, handle_raw: f64) -> i32 {
        let Some(h) = handle(handle_raw) else { return -1 };
        match self.items.cancel(h) {
            Some(()) => {
                self.settle();
                slot(h)
            }
            None => -1,
        }
    }

    /// Moves an item's deadline to `deadline` on `performance.now()`'s clock; false when the
    /// handle names nothing.
    #[wasm_bindgen(js_name = rescheduleAt)]
    pub fn reschedule_at(&mut self, handle_raw: f64, deadline: f64) -> bool {
        let Some(h) = handle(handle_raw) else { return false };
        let moved = self.items.reschedule_at(h, deadline) == Ok(true);
        if moved {
            self.settle();
        }
        moved
    }

    /// Milliseconds until an item is due (negative when overdue), or NaN when unknown.
    #[wasm_bindgen(js_name = delayOf)]
    pub fn delay_of(&self, handle_raw: f64) -> f64 {
        handle(handle_raw).and_then(|h| self.items.delay_of(h)).unwrap_or(f64::NAN)
    }

    /// The deadline of an item on `performance.now()`'s clock, or NaN when unknown.
    #[wasm_bindgen(js_name = deadlineOf)]
    pub fn deadline_of(&self, handle_raw: f64) -> f64 {
        handle(handle_raw).and_then(|h| self.items.deadline_of(h)).unwrap_or(f64::NAN)
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.items.len() as u32
    }

    #[wasm_bindgen(getter, js_name = remainingCapacity)]
    pub fn remaining_capacity(&self) -> f64 {
        match self.items.capacity() {
            usize::MAX => f64::INFINITY,
            _ => self.items.remaining_capacity() as f64,
        }
    }

    pub fn clear(&mut self) {
        self.items.clear();
        self.settle();
    }

    /// Every item's slot in deadline order (FIFO among ties).
    #[wasm_bindgen(js_name = sortedSlots)]
    pub fn sorted_slots(&self) -> Vec<u32> {
        self.items.iter_sorted().map(|(h, _, _)| slot(h) as u32).collect()
    }

    /// Every item's deadline on `performance.now()`'s clock, in the order of `sortedSlots`.
    #[wasm_bindgen(js_name = sortedDeadlines)]
    pub fn sorted_deadlines(&self) -> Vec<f64> {
        self.items.iter_sorted().map(|(_, d, _)| d).collect()
    }

    /// Registers a take-timeout `ms` from now; its handle.
    #[wasm_bindgen(js_name = addTimeout)]
    pub fn add_timeout(&mut self, ms: f64) -> f64 {
        let h = self.timeouts.offer((), ms).map(Handle::into_raw).unwrap_or(0) as f64;
        self.settle();
        h
    }

    /// Forgets a take-timeout (its take was served or aborted). The caller settles.
    #[wasm_bindgen(js_name = cancelTimeout)]
    pub fn cancel_timeout(&mut self, handle_raw: f64) {
        if let Some(h) = handle(handle_raw) {
            self.timeouts.cancel(h);
        }
    }

    /// Takes an expired take-timeout; its slot, or -1. The caller settles.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&mut self) -> i32 {
        self.timeouts.poll_expired().map_or(-1, |e| slot(e.handle))
    }

    /// Tells the binding how many takes wait, and what to call when one may be served.
    #[wasm_bindgen(js_name = setTakers)]
    pub fn set_takers(&mut self, takers: u32, wake: Option<Function>) {
        self.takers = takers;
        self.wake = if takers > 0 { wake } else { None };
        self.settle();
    }

    /// The timer fired: it is no longer armed. Whether anything is due now.
    pub fn fired(&mut self) -> bool {
        self.timer.id = None;
        self.wakes += 1;
        let now = HostClock.now();
        let due = |d: Option<f64>| d.is_some_and(|d| d <= now);
        let due = due(self.items.next_deadline()) || due(self.timeouts.next_deadline());
        if !due {
            self.early_wakes += 1;
        }
        due
    }

    /// Re-arms, or disarms, the one timer so that it is armed exactly while someone waits,
    /// for the earliest deadline that could serve them.
    pub fn settle(&mut self) {
        let target = if self.takers == 0 {
            None
        } else {
            match (self.items.next_deadline(), self.timeouts.next_deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        match (target, &self.timer.id) {
            (None, None) => {}
            (None, Some(id)) => {
                disarm_timer(id);
                self.timer.id = None;
            }
            (Some(t), Some(_)) if t == self.timer.target => {}
            (Some(t), _) => self.arm(t),
        }
    }

    /// Figures for monitoring (a plain object).
    pub fn stats(&self) -> JsValue {
        let stats = Stats {
            size: self.items.len(),
            takers: self.takers,
            timers_armed: u32::from(self.timer.id.is_some()),
            timer_arms: self.timer.arms,
            wakes: self.wakes,
            early_wakes: self.early_wakes,
            delivered: self.lateness.count(),
            lateness_p50: self.lateness.quantile(0.5),
            lateness_p99: self.lateness.quantile(0.99),
            lateness_max: self.lateness.max(),
        };
        serde_wasm_bindgen::to_value(&stats).unwrap_or(JsValue::UNDEFINED)
    }
}

impl Core {
    fn arm(&mut self, target: f64) {
        if let Some(id) = self.timer.id.take() {
            disarm_timer(&id);
        }
        let Some(wake) = &self.wake else { return };
        // Round up: a timer rounded down would fire before the deadline, find nothing
        // due and cost a second arm. Long waits are chained in steps the host accepts.
        let ms = (target - HostClock.now()).ceil().clamp(0.0, MAX_TIMER_MS);
        self.timer.id = Some(arm_timer(wake, ms, self.keep_alive));
        self.timer.target = target;
        self.timer.arms += 1;
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        if let Some(id) = self.timer.id.take() {
            disarm_timer(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The binding under a real JS host (Node, via wasm-bindgen-test): the real clock, the
    //! real host timer, Promises.

    use super::*;
    use js_sys::Promise;
    use wasm_bindgen_futures::JsFuture;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn stat(core: &Core, name: &str) -> f64 {
        js_sys::Reflect::get(&core.stats(), &name.into()).unwrap().as_f64().unwrap()
    }

    /// A wake function, and a Promise that resolves when the timer calls it.
    fn wake_signal() -> (Function, JsFuture) {
        let mut resolve = None;
        let promise = Promise::new(&mut |res, _| resolve = Some(res));
        (resolve.unwrap(), JsFuture::from(promise))
    }

    #[wasm_bindgen_test]
    fn numbers_in_numbers_out() {
        let mut core = Core::new(-1.0, true);
        let late = core.offer(50.0);
        let due = core.offer(-1.0);
        assert!(late >= 2f64.powi(32) && late < 2f64.powi(53));
        assert_eq!(core.size(), 2);
        assert_eq!(core.peek_slot(), (due as u64 & 0xFFFF_FFFF) as i32);
        assert_eq!(core.poll(), (due as u64 & 0xFFFF_FFFF) as i32);
        assert_eq!(core.poll(), -1, "the other item is not due");
        assert_eq!(core.cancel(late), (late as u64 & 0xFFFF_FFFF) as i32);
        assert_eq!(core.cancel(late), -1, "stale");
        for bad in [-1.0, 0.5, f64::NAN, 2f64.powi(60)] {
            assert_eq!(core.cancel(bad), -1);
            assert!(core.delay_of(bad).is_nan());
            assert!(!core.reschedule_at(bad, 1.0));
        }
        assert_eq!(core.offer(f64::NAN), -1.0);
        assert_eq!(core.size(), 0);
    }

    #[wasm_bindgen_test]
    fn bounded_core_refuses_when_full() {
        let mut core = Core::new(1.0, true);
        assert!(core.offer(1.0) >= 0.0);
        assert_eq!(core.offer(1.0), -1.0);
        assert_eq!(core.remaining_capacity(), 0.0);
        assert_eq!(Core::new(-1.0, true).remaining_capacity(), f64::INFINITY);
    }

    #[wasm_bindgen_test]
    fn one_timer_only_while_someone_waits() {
        let mut core = Core::new(-1.0, true);
        core.offer(10_000.0);
        assert_eq!(stat(&core, "timersArmed"), 0.0, "nobody waits");
        let (wake, _) = wake_signal();
        core.set_takers(3, Some(wake.clone()));
        assert_eq!(stat(&core, "timersArmed"), 1.0);
        assert_eq!(stat(&core, "timerArms"), 1.0);
        core.offer(20_000.0); // not the new head: no re-arm
        assert_eq!(stat(&core, "timerArms"), 1.0);
        let head = core.offer(5_000.0); // a new head re-arms
        assert_eq!(stat(&core, "timerArms"), 2.0);
        assert_eq!(stat(&core, "timersArmed"), 1.0);
        core.cancel(head); // cancelling the head re-arms for the next one
        assert_eq!(stat(&core, "timerArms"), 3.0);
        core.set_takers(0, None);
        assert_eq!(stat(&core, "timersArmed"), 0.0);
    }

    #[wasm_bindgen_test]
    async fn the_timer_fires_at_the_head_deadline_never_before() {
        let mut core = Core::new(-1.0, true);
        let start = performance_now();
        let second = core.offer(30.0);
        let first = core.offer(15.0);
        let (wake, fired) = wake_signal();
        core.set_takers(1, Some(wake));
        fired.await.unwrap();
        let deadline = core.deadline_of(first);
        // A host timer may fire early; the core then re-arms rather than hand out.
        let mut due = core.fired();
        while !due {
            let (wake, fired) = wake_signal();
            core.set_takers(1, Some(wake));
            fired.await.unwrap();
            due = core.fired();
        }
        assert!(performance_now() >= deadline, "never early");
        assert_eq!(core.take_due(), (first as u64 & 0xFFFF_FFFF) as i32);
        assert_eq!(core.take_due(), -1, "the second is not due yet");
        assert!(core.deadline_of(second) > deadline);
        assert!(performance_now() - start < 2_000.0, "lateness within a wide margin");
        assert_eq!(stat(&core, "delivered"), 1.0);
    }

    #[wasm_bindgen_test]
    async fn a_take_timeout_shares_the_one_timer() {
        let mut core = Core::new(-1.0, true);
        core.offer(60_000.0);
        let t = core.add_timeout(10.0);
        let (wake, fired) = wake_signal();
        core.set_takers(1, Some(wake));
        assert_eq!(stat(&core, "timersArmed"), 1.0);
        fired.await.unwrap();
        loop {
            if core.fired() {
                break;
            }
            let (wake, fired) = wake_signal();
            core.set_takers(1, Some(wake));
            fired.await.unwrap();
        }
        assert_eq!(core.take_due(), -1);
        assert_eq!(core.poll_timeout(), (t as u64 & 0xFFFF_FFFF) as i32);
        core.set_takers(0, None);
        assert_eq!(stat(&core, "timersArmed"), 0.0);
        assert_eq!(core.size(), 1, "the item stays");
    }
}
