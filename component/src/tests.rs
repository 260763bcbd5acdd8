//! The queue behind the WIT interface on a manual clock: no sleeping, exact instants.
//! (`tests/component/` runs the built component in real hosts, on real time.)

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tarry_queue::{Clock, ManualClock};

use crate::clock::{ms_of, ns_not_before};
use crate::queue::{Alarm, Queue};
use crate::{Error, Item};

/// A manual clock whose pollables are their instants; blocking moves the clock there.
#[derive(Default)]
struct ManualAlarm {
    clock: ManualClock,
    subscribed: RefCell<Vec<f64>>,
    /// How much earlier than asked the next wake-up comes (once), as a host's timer may.
    early_by: Cell<f64>,
}

impl Clock for ManualAlarm {
    fn now(&self) -> f64 {
        self.clock.now()
    }
}

impl Alarm for Rc<ManualAlarm> {
    type Pollable = f64;

    fn subscribe(&self, at: f64) -> f64 {
        self.subscribed.borrow_mut().push(at);
        at
    }

    fn block(&self, at: &f64) {
        self.clock.advance(at - self.early_by.take() - self.clock.now());
    }
}

fn queue() -> (Queue<Rc<ManualAlarm>>, Rc<ManualAlarm>) {
    let alarm = Rc::new(ManualAlarm::default());
    (Queue::new(alarm.clone()), alarm)
}

fn payloads(items: impl IntoIterator<Item = Item>) -> Vec<Vec<u8>> {
    items.into_iter().map(|i| i.payload).collect()
}

fn message(error: Error) -> String {
    match error {
        Error::InvalidArgument(message) => message,
        other => panic!("expected invalid-argument, got {other:?}"),
    }
}

#[test]
fn take_returns_items_in_deadline_order_at_their_deadlines_fifo_among_ties() {
    let (mut q, alarm) = queue();
    q.offer(b"c".to_vec(), 30.0).unwrap();
    q.offer(b"a1".to_vec(), 10.0).unwrap();
    q.offer(b"b".to_vec(), 20.0).unwrap();
    q.offer(b"a2".to_vec(), 10.0).unwrap();
    let mut taken = Vec::new();
    while !q.is_empty() {
        let item = q.take(f64::INFINITY).unwrap().unwrap();
        // Never early: the clock has reached the deadline when the item comes out.
        assert!(alarm.now() >= item.deadline_ms);
        taken.push((item.payload, alarm.now()));
    }
    let expected: Vec<(Vec<u8>, f64)> =
        vec![(b"a1".to_vec(), 10.0), (b"a2".to_vec(), 10.0), (b"b".to_vec(), 20.0), (b"c".to_vec(), 30.0)];
    assert_eq!(taken, expected);
    // One pollable per deadline waited for, not one per item or per loop turn.
    assert_eq!(*alarm.subscribed.borrow(), [10.0, 20.0, 30.0]);
    let stats = q.stats();
    assert_eq!((stats.len, stats.wakes, stats.early_wakes), (0, 3, 0));
}

#[test]
fn take_with_an_infinite_timeout_waits_for_the_head() {
    let (mut q, alarm) = queue();
    q.offer(b"x".to_vec(), 1234.5).unwrap();
    let item = q.take(f64::INFINITY).unwrap().unwrap();
    assert_eq!((item.payload, item.deadline_ms, alarm.now()), (b"x".to_vec(), 1234.5, 1234.5));
}

#[test]
fn take_times_out_at_its_timeout_and_leaves_the_item_in_the_queue() {
    let (mut q, alarm) = queue();
    let h = q.offer(b"later".to_vec(), 100.0).unwrap();
    assert_eq!(q.take(40.0).unwrap(), None);
    assert_eq!(alarm.now(), 40.0);
    assert_eq!(q.len(), 1);
    assert_eq!(q.delay_of(h), Some(60.0));
    // The next take waits for the head.
    assert_eq!(q.take(1000.0).unwrap().map(|i| i.payload), Some(b"later".to_vec()));
    assert_eq!(alarm.now(), 100.0);
    assert_eq!(*alarm.subscribed.borrow(), [40.0, 100.0]);
}

#[test]
fn take_on_an_empty_queue_sleeps_out_its_timeout() {
    let (mut q, alarm) = queue();
    assert_eq!(q.take(25.0).unwrap(), None);
    assert_eq!(alarm.now(), 25.0);
}

#[test]
fn take_with_zero_timeout_never_subscribes() {
    let (mut q, alarm) = queue();
    q.offer(b"later".to_vec(), 10.0).unwrap();
    assert_eq!(q.take(0.0).unwrap(), None);
    q.offer(b"now".to_vec(), -1.0).unwrap();
    assert_eq!(q.take(0.0).unwrap().map(|i| i.payload), Some(b"now".to_vec()));
    assert!(alarm.subscribed.borrow().is_empty());
    assert_eq!(alarm.now(), 0.0);
}

#[test]
fn an_early_wake_hands_out_nothing_and_subscribes_again() {
    let (mut q, alarm) = queue();
    q.offer(b"x".to_vec(), 50.0).unwrap();
    alarm.early_by.set(5.0);
    let item = q.take(1000.0).unwrap().unwrap();
    assert_eq!((item.payload, alarm.now()), (b"x".to_vec(), 50.0));
    assert_eq!(*alarm.subscribed.borrow(), [50.0, 50.0]);
    let stats = q.stats();
    assert_eq!((stats.wakes, stats.early_wakes), (2, 1));
}

#[test]
fn poll_drain_and_peek_follow_the_core() {
    let (mut q, alarm) = queue();
    for (i, delay) in [5.0, 1.0, 3.0, 2.0, 4.0].into_iter().enumerate() {
        q.offer(vec![i as u8], delay).unwrap();
    }
    assert_eq!(q.poll(), None);
    assert_eq!(q.peek().map(|i| (i.payload, i.deadline_ms)), Some((vec![1], 1.0)));
    assert_eq!(q.next_deadline(), Some(1.0));
    alarm.clock.advance(3.0);
    assert_eq!(payloads(q.drain_expired(2)), [vec![1], vec![3]]);
    assert_eq!(payloads(q.drain_expired(10)), [vec![2]]);
    assert_eq!(q.poll(), None);
    assert_eq!(q.len(), 2);
    alarm.clock.advance(10.0);
    assert_eq!(q.poll().map(|i| i.payload), Some(vec![4]));
    assert_eq!(q.peek().map(|i| i.payload), Some(vec![0]));
    assert_eq!(q.len(), 1);
}

#[test]
fn cancel_by_handle_and_stale_handles_name_nothing() {
    let (mut q, _) = queue();
    let a = q.offer(b"a".to_vec(), 10.0).unwrap();
    let b = q.offer(b"b".to_vec(), 20.0).unwrap();
    assert_eq!(q.cancel(a), Some(b"a".to_vec()));
    assert_eq!(q.cancel(a), None);
    assert_eq!(q.reschedule(a, 1.0), Ok(false));
    assert_eq!(q.delay_of(a), None);
    // The slot a used is reused, under a new handle: a still names nothing.
    let c = q.offer(b"c".to_vec(), 5.0).unwrap();
    assert_ne!(c, a);
    assert_eq!(q.cancel(a), None);
    assert_eq!(q.cancel(u64::MAX), None);
    assert_eq!(q.len(), 2);
    q.clear();
    assert_eq!((q.len(), q.cancel(b), q.cancel(c)), (0, None, None));
}

#[test]
fn reschedule_moves_an_item_behind_those_already_on_its_deadline() {
    let (mut q, alarm) = queue();
    let a = q.offer(b"a".to_vec(), 10.0).unwrap();
    q.offer(b"b".to_vec(), 20.0).unwrap();
    let c = q.offer(b"c".to_vec(), 30.0).unwrap();
    assert_eq!(q.reschedule(a, 20.0), Ok(true));
    assert_eq!(q.reschedule_at(c, 15.0), Ok(true));
    assert_eq!(q.delay_of(a), Some(20.0));
    let mut order = Vec::new();
    while !q.is_empty() {
        order.push(q.take(100.0).unwrap().unwrap().payload);
    }
    assert_eq!(order, [b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    assert_eq!(alarm.now(), 20.0);
}

#[test]
fn bad_input_is_an_error_that_names_the_argument_and_changes_nothing() {
    let (mut q, alarm) = queue();
    let h = q.offer(b"kept".to_vec(), 10.0).unwrap();
    let m = message(q.offer(b"x".to_vec(), f64::NAN).unwrap_err());
    assert_eq!(m, "delay-ms must be a finite number of milliseconds, got NaN");
    let m = message(q.offer(b"x".to_vec(), f64::INFINITY).unwrap_err());
    assert_eq!(m, "delay-ms must be a finite number of milliseconds, got Infinity");
    let m = message(q.offer_at(b"x".to_vec(), f64::NEG_INFINITY).unwrap_err());
    assert_eq!(m, "deadline-ms must be a finite number of milliseconds, got -Infinity");
    assert!(message(q.reschedule(h, f64::NAN).unwrap_err()).starts_with("delay-ms "));
    assert!(message(q.reschedule_at(h, f64::INFINITY).unwrap_err()).starts_with("deadline-ms "));
    assert!(message(q.take(-1.0).unwrap_err()).starts_with("timeout-ms must not be negative"));
    assert_eq!(message(q.take(f64::NAN).unwrap_err()), "timeout-ms must be a number of milliseconds, got NaN");
    assert_eq!(q.len(), 1);
    assert_eq!(q.delay_of(h), Some(10.0));
    q.cancel(h);
    let m = message(q.take(f64::INFINITY).unwrap_err());
    assert!(m.starts_with("timeout-ms is infinite and the queue is empty"), "{m}");
    assert_eq!(alarm.now(), 0.0);
    assert!(alarm.subscribed.borrow().is_empty());
}

#[test]
fn a_bounded_queue_refuses_offers_when_full() {
    let alarm = Rc::new(ManualAlarm::default());
    // The core's limit, 2^26 items: beyond it `bounded` refuses rather than cap silently.
    assert!(Queue::bounded(alarm.clone(), 1 << 26).is_ok());
    for capacity in [0, (1 << 26) + 1, 1 << 31, u32::MAX] {
        let m = message(Queue::bounded(alarm.clone(), capacity).err().unwrap());
        assert_eq!(
            m,
            format!("capacity must be between 1 and 67108864 (2^26, the most a queue holds), got {capacity}")
        );
    }
    let mut q = Queue::bounded(alarm, 2).unwrap();
    let a = q.offer(b"a".to_vec(), 1.0).unwrap();
    q.offer(b"b".to_vec(), 2.0).unwrap();
    assert_eq!(q.offer(b"c".to_vec(), 0.0), Err(Error::Full(2)));
    assert_eq!(q.offer_at(b"c".to_vec(), 0.0), Err(Error::Full(2)));
    assert_eq!(q.len(), 2);
    q.cancel(a);
    assert!(q.offer(b"c".to_vec(), 0.0).is_ok());
}

#[test]
fn a_pollable_instant_reads_at_least_its_deadline_on_the_queue_clock() {
    for ms in [0.001, 0.1, 1.0 / 3.0, 1.0, 2.5, 10.3, 999.999_999, 86_400_000.123, 1e10 / 7.0, 1e12 + 0.7] {
        let ns = ns_not_before(ms);
        assert!(ms_of(ns) >= ms, "{ms} ms -> {ns} ns reads {}", ms_of(ns));
        assert!(ms_of(ns) - ms <= 0.002, "{ms} ms -> {ns} ns is late by more than 2 µs");
    }
    assert_eq!(ns_not_before(f64::NAN), 0);
    assert_eq!(ns_not_before(-5.0), 0);
    assert_eq!(ns_not_before(1e300), u64::MAX);
}
