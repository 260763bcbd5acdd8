//! Clocks: where a [`DelayQueue`](crate::DelayQueue) reads "now".
//!
//! A delay queue measures relative delays on a **monotonic** clock, never on wall-clock
//! time, so that a clock jump (NTP, a user changing the system time) fires nothing early
//! or late. Time is an `f64` count of milliseconds since an arbitrary origin, the unit of
//! `performance.now()`, so the same core serves Rust and JS without conversions.
//!
//! ```
//! use tarry_queue::{Clock, ManualClock};
//! let clock = ManualClock::new(0.0);
//! clock.advance(250.0);
//! assert_eq!(clock.now(), 250.0);
//! ```

use alloc::rc::Rc;
use core::cell::Cell;

/// A monotonic source of time in milliseconds. `now()` never goes backwards.
pub trait Clock {
    /// Milliseconds since this clock's origin.
    fn now(&self) -> f64;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> f64 {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for Rc<C> {
    fn now(&self) -> f64 {
        (**self).now()
    }
}

/// A clock that moves only when told to: for tests and simulations, and for a driver that
/// reads the time itself and hands it over (the wasm binding is handed it by JS).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Cell<f64>,
}

impl ManualClock {
    /// A clock that reads `start` until advanced.
    pub fn new(start: f64) -> Self {
        Self { now: Cell::new(start) }
    }

    /// Moves the clock forward by `ms` (negative or NaN steps are ignored: time is monotonic).
    pub fn advance(&self, ms: f64) {
        if ms > 0.0 {
            self.now.set(self.now.get() + ms);
        }
    }

    /// Moves the clock forward to `t`; an earlier (or NaN) `t` leaves it where it is.
    pub fn advance_to(&self, t: f64) {
        if t > self.now.get() {
            self.now.set(t);
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> f64 {
        self.now.get()
    }
}

/// The process's monotonic clock (`std::time::Instant`), with its origin at creation.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: std::time::Instant,
}

#[cfg(not(target_arch = "wasm32"))]
impl Default for SystemClock {
    fn default() -> Self {
        Self { origin: std::time::Instant::now() }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now(&self) -> f64 {
        self.origin.elapsed().as_secs_f64() * 1000.0
    }
}
