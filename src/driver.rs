//! [`Driver`]: a [`DelayQueue`] woken by one timer, for callers that wait on it.
//!
//! The queue never waits; whoever waits on it needs a timer that fires when something falls
//! due. A driver keeps the rules for doing that with exactly one timer, whatever waits: a
//! JS `take()`, a scheduled callback, a Durable Object's alarm.
//!
//! * **When to wake.** [`wake_at`](Driver::wake_at): while something waits, the earliest of
//!   the head's deadline and the earliest take-timeout; while nothing waits, never. The
//!   caller arms its one timer for that time and asks again after every change.
//! * **Take what is due.** [`take`](Driver::take) hands out the expired head (FIFO among
//!   equal deadlines, as the queue keeps them) and records how late it went out.
//! * **Take-timeouts.** A wait may give up at a deadline ([`add_timeout`](Driver::add_timeout));
//!   those deadlines share the one timer and expire in order, FIFO among equal ones.
//! * **Figures.** Wake-ups, early ones (a host timer may fire before anything is due: the
//!   caller then re-arms and hands nothing out), and lateness as a [`Lateness`] histogram.
//!
//! Everything is read on the queue's [`Clock`]. A driver that reads the time itself hands
//! it over through a [`ManualClock`](crate::ManualClock), as the wasm binding does:
//!
//! ```
//! use std::rc::Rc;
//! use tarry_queue::{DelayQueue, Driver, ManualClock};
//!
//! let clock = Rc::new(ManualClock::new(0.0));
//! let mut d = Driver::new(DelayQueue::with_clock(clock.clone()));
//! d.items_mut().offer_at("order 42", 100.0).unwrap();
//! assert_eq!(d.wake_at(false), None);       // nobody waits: no timer
//! assert_eq!(d.wake_at(true), Some(100.0)); // someone waits: wake at the head's deadline
//! clock.advance(40.0);
//! assert!(!d.fired());                      // a timer that fired early finds nothing due
//! clock.advance(62.0);
//! assert!(d.fired());
//! assert_eq!(d.take().map(|e| e.value), Some("order 42"));
//! assert_eq!(d.lateness().max(), 2.0);
//! ```

use crate::clock::Clock;
use crate::lateness::Lateness;
use crate::queue::{DelayQueue, Expired, Handle, Refusal};

/// A delay queue with the waiting side of one timer; see the [module documentation](self).
pub struct Driver<T, C> {
    items: DelayQueue<T, C>,
    /// Deadlines of waits that give up then.
    timeouts: DelayQueue<(), C>,
    wakes: u64,
    early_wakes: u64,
    lateness: Lateness,
}

impl<T, C: Clock + Clone> Driver<T, C> {
    /// Drives `items`; take-timeouts are read on the same clock.
    pub fn new(items: DelayQueue<T, C>) -> Self {
        let timeouts = DelayQueue::untagged(items.clock().clone());
        Self { items, timeouts, wakes: 0, early_wakes: 0, lateness: Lateness::default() }
    }
}

impl<T, C: Clock> Driver<T, C> {
    /// The items.
    #[inline]
    pub fn items(&self) -> &DelayQueue<T, C> {
        &self.items
    }

    /// The items, to offer, cancel, reschedule or poll (a poll is not a wait: it records no
    /// lateness). Ask [`wake_at`](Self::wake_at) again after a change.
    #[inline]
    pub fn items_mut(&mut self) -> &mut DelayQueue<T, C> {
        &mut self.items
    }

    /// For a waiter: removes the expired head and records how late it went out.
    #[inline]
    pub fn take(&mut self) -> Option<Expired<T>> {
        let e = self.items.poll_expired()?;
        self.lateness.record(self.items.clock().now() - e.deadline);
        Some(e)
    }

    /// A wait that gives up at `deadline`; its handle, to [`cancel_timeout`](Self::cancel_timeout)
    /// when the wait ends otherwise.
    pub fn add_timeout(&mut self, deadline: f64) -> Result<Handle, Refusal> {
        self.timeouts.offer_at((), deadline).map_err(|e| e.refusal)
    }

    /// Forgets a take-timeout (its wait was served or aborted); false if it had expired.
    pub fn cancel_timeout(&mut self, timeout: Handle) -> bool {
        self.timeouts.cancel(timeout).is_some()
    }

    /// Removes an expired take-timeout, earliest first; the caller ends that wait.
    pub fn poll_timeout(&mut self) -> Option<Handle> {
        self.timeouts.poll_expired().map(|e| e.handle)
    }

    /// When the one timer should fire: `None` while nothing waits, or when nothing could
    /// end a wait.
    #[inline]
    pub fn wake_at(&self, waiting: bool) -> Option<f64> {
        if !waiting {
            return None;
        }
        match (self.items.next_deadline(), self.timeouts.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The timer fired: counts the wake-up, and says whether anything is due (an item or
    /// a take-timeout). A wake-up that finds nothing due is counted as early.
    pub fn fired(&mut self) -> bool {
        self.wakes += 1;
        let now = self.items.clock().now();
        let due = |d: Option<f64>| d.is_some_and(|d| d <= now);
        let due = due(self.items.next_deadline()) || due(self.timeouts.next_deadline());
        if !due {
            self.early_wakes += 1;
        }
        due
    }

    /// Wake-ups so far.
    pub fn wakes(&self) -> u64 {
        self.wakes
    }

    /// Wake-ups that found nothing due.
    pub fn early_wakes(&self) -> u64 {
        self.early_wakes
    }

    /// How late the items handed out by [`take`](Self::take) went out.
    pub fn lateness(&self) -> &Lateness {
        &self.lateness
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::ManualClock;

    fn driver() -> (Driver<&'static str, Rc<ManualClock>>, Rc<ManualClock>) {
        let clock = Rc::new(ManualClock::new(1000.0));
        (Driver::new(DelayQueue::with_clock(clock.clone())), clock)
    }

    #[test]
    fn wakes_only_while_something_waits_for_the_earliest_deadline() {
        let (mut d, _clock) = driver();
        assert_eq!(d.wake_at(true), None, "nothing to wait for");
        d.items_mut().offer("b", 50.0).unwrap();
        let a = d.items_mut().offer("a", 20.0).unwrap();
        assert_eq!(d.wake_at(false), None);
        assert_eq!(d.wake_at(true), Some(1020.0));
        let t = d.add_timeout(1010.0).unwrap();
        assert_eq!(d.wake_at(true), Some(1010.0), "a take-timeout shares the timer");
        assert!(d.cancel_timeout(t));
        assert!(!d.cancel_timeout(t));
        d.items_mut().cancel(a);
        assert_eq!(d.wake_at(true), Some(1050.0), "the new head");
    }

    #[test]
    fn take_hands_out_in_order_never_early_and_records_lateness() {
        let (mut d, clock) = driver();
        for (v, ms) in [("c", 30.0), ("a", 10.0), ("b1", 20.0), ("b2", 20.0)] {
            d.items_mut().offer(v, ms).unwrap();
        }
        clock.advance(9.0);
        assert!(!d.fired());
        assert!(d.take().is_none(), "never early");
        clock.advance(16.0); // 25 ms: a is 15 ms late, b1 and b2 5 ms
        assert!(d.fired());
        let out: Vec<_> = std::iter::from_fn(|| d.take().map(|e| e.value)).collect();
        assert_eq!(out, ["a", "b1", "b2"]);
        assert_eq!((d.wakes(), d.early_wakes()), (2, 1));
        assert_eq!(d.lateness().count(), 3);
        assert_eq!(d.lateness().max(), 15.0);
        assert!(d.items_mut().poll().is_none());
        clock.advance(5.0);
        assert_eq!(d.items_mut().poll(), Some("c"));
        assert_eq!(d.lateness().count(), 3, "a poll is not a wait");
    }

    #[test]
    fn take_timeouts_expire_in_order_fifo_among_equal_ones() {
        let (mut d, clock) = driver();
        let t2 = d.add_timeout(1030.0).unwrap();
        let t1a = d.add_timeout(1010.0).unwrap();
        let t1b = d.add_timeout(1010.0).unwrap();
        assert_eq!(d.add_timeout(f64::NAN), Err(Refusal::NotFinite));
        assert_eq!(d.poll_timeout(), None);
        clock.advance(10.0);
        assert!(d.fired(), "an expired take-timeout is something due");
        assert_eq!(d.poll_timeout(), Some(t1a));
        assert_eq!(d.poll_timeout(), Some(t1b));
        assert_eq!(d.poll_timeout(), None);
        assert_eq!(d.wake_at(true), Some(1030.0));
        assert!(!d.cancel_timeout(t1a), "an expired timeout is gone");
        clock.advance(30.0);
        assert_eq!(d.poll_timeout(), Some(t2));
        assert_eq!(d.wake_at(true), None);
    }
}
