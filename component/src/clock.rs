//! The queue's clock on `wasi:clocks/monotonic-clock`, and the one pollable `take` blocks on.
//!
//! WASI counts time in `u64` nanoseconds from an arbitrary origin; the core counts `f64`
//! milliseconds, the unit of the npm package's API. This module is the one place that
//! converts between the two. A queue's clock reads milliseconds since the queue was created,
//! so deadlines are small numbers whose fractions keep sub-nanosecond precision.

/// Nanoseconds after a clock's origin, as the queue's milliseconds.
pub fn ms_of(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Nanoseconds after the origin at which [`ms_of`] reads at least `ms`: the instant to
/// subscribe a pollable for, so that it never wakes a take before its deadline.
///
/// One microsecond is added because ms → ns → ms in `f64` can land a hair below `ms`; a
/// pollable for that instant would wake, find nothing due, and subscribe again.
pub fn ns_not_before(ms: f64) -> u64 {
    if ms.is_nan() || ms <= 0.0 {
        return 0;
    }
    // `as` saturates: a deadline past u64 nanoseconds (584 years) waits "forever".
    ((ms * 1e6).ceil() + 1e3) as u64
}

#[cfg(target_arch = "wasm32")]
pub use wasi::WasiClock;

#[cfg(target_arch = "wasm32")]
mod wasi {
    use tarry_queue::Clock;
    use wasip2::clocks::monotonic_clock;
    use wasip2::io::poll::Pollable;

    use super::{ms_of, ns_not_before};
    use crate::queue::Alarm;

    /// `wasi:clocks/monotonic-clock`, with its origin where the queue was created.
    pub struct WasiClock {
        origin: monotonic_clock::Instant,
    }

    /// A clock whose origin is now.
    impl Default for WasiClock {
        fn default() -> Self {
            Self { origin: monotonic_clock::now() }
        }
    }

    impl Clock for WasiClock {
        fn now(&self) -> f64 {
            ms_of(monotonic_clock::now().saturating_sub(self.origin))
        }
    }

    impl Alarm for WasiClock {
        type Pollable = Pollable;

        fn subscribe(&self, at: f64) -> Pollable {
            monotonic_clock::subscribe_instant(self.origin.saturating_add(ns_not_before(at)))
        }

        fn block(&self, pollable: &Pollable) {
            pollable.block();
        }
    }
}
