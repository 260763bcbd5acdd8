//! Unit tests of the core on a manual clock, and a model-based property test against a
//! sorted `Vec`.

use std::rc::Rc;

use proptest::prelude::*;

use crate::heap::{MAX_GENERATION, SLOT_BITS, SLOT_MASK};

use crate::{DelayQueue, Handle, ManualClock, Refusal};

type Q<T> = DelayQueue<T, Rc<ManualClock>>;

fn queue<T>() -> (Q<T>, Rc<ManualClock>) {
    let clock = Rc::new(ManualClock::new(1000.0));
    (DelayQueue::with_clock(clock.clone()), clock)
}

#[test]
fn nothing_comes_out_before_its_deadline() {
    let (mut q, clock) = queue();
    q.offer('a', 10.0).unwrap();
    clock.advance(9.999);
    assert_eq!(q.poll(), None);
    assert_eq!(q.len(), 1);
    clock.advance(0.001);
    assert_eq!(q.poll(), Some('a'));
    assert!(q.is_empty());
}

#[test]
fn expiry_order_and_fifo_ties() {
    let (mut q, clock) = queue();
    for (v, d) in [(1, 30.0), (2, 10.0), (3, 20.0), (4, 10.0), (5, 10.0), (6, -5.0)] {
        q.offer(v, d).unwrap();
    }
    assert_eq!(q.peek(), Some(&6));
    clock.advance(100.0);
    assert_eq!(q.drain_expired(usize::MAX), vec![6, 2, 4, 5, 3, 1]);
}

#[test]
fn cancel_by_handle_and_stale_handles() {
    let (mut q, clock) = queue();
    let a = q.offer("a", 5.0).unwrap();
    let b = q.offer("b", 6.0).unwrap();
    assert_eq!(q.cancel(a), Some("a"));
    assert_eq!(q.cancel(a), None, "a cancelled handle is stale");
    // The freed slot is reused, but with a new generation: the old handle stays stale.
    let c = q.offer("c", 1.0).unwrap();
    assert_ne!(a, c);
    assert_eq!(a.into_raw() & SLOT_MASK, c.into_raw() & SLOT_MASK, "slot reused");
    assert_eq!(q.cancel(a), None);
    assert_eq!(q.cancel(Handle::from_raw(u64::MAX)), None);
    assert_eq!(q.cancel(Handle::from_raw(0)), None);
    clock.advance(10.0);
    assert_eq!(q.poll(), Some("c"));
    assert_eq!(q.cancel(c), None, "a taken item's handle is stale");
    assert_eq!(q.poll(), Some("b"));
    assert_eq!(q.cancel(b), None);
}

#[test]
fn reschedule_moves_an_item_and_keeps_its_handle() {
    let (mut q, clock) = queue();
    let a = q.offer("a", 10.0).unwrap();
    q.offer("b", 20.0).unwrap();
    assert_eq!(q.reschedule(a, 30.0), Ok(true));
    assert_eq!(q.peek(), Some(&"b"));
    assert_eq!(q.delay_of(a), Some(30.0));
    clock.advance(25.0);
    assert_eq!(q.delay_of(a), Some(5.0));
    assert_eq!(q.poll(), Some("b"));
    assert_eq!(q.reschedule(a, -1.0), Ok(true));
    assert_eq!(q.delay_of(a), Some(-1.0));
    assert_eq!(q.reschedule(a, f64::NAN), Err(Refusal::NotFinite));
    assert_eq!(q.poll(), Some("a"));
    assert_eq!(q.reschedule(a, 1.0), Ok(false));
    assert_eq!(q.delay_of(a), None);
}

#[test]
fn extend_moves_an_item_only_later() {
    let (mut q, clock) = queue();
    let a = q.offer_at("a", 10.0).unwrap();
    let b = q.offer_at("b", 10.0).unwrap();
    assert_eq!(q.extend_at(a, 10.0), Ok(false), "an equal deadline: not moved");
    assert_eq!(q.extend_at(a, 5.0), Ok(false), "an earlier one: not moved");
    assert_eq!(q.deadline_of(a), Some(10.0));
    assert_eq!(q.extend_at(a, f64::NAN), Err(Refusal::NotFinite));
    assert_eq!(q.extend_at(b, 20.0), Ok(true));
    let c = q.offer_at("c", 20.0).unwrap();
    assert_eq!(q.extend_at(c, 20.0), Ok(false));
    clock.advance(20.0);
    assert_eq!(q.drain_expired(9), vec!["a", "b", "c"], "a kept its place; b queued as moved");
    assert_eq!(q.extend_at(a, 30.0), Ok(false), "a stale handle names nothing");
}

#[test]
fn rescheduling_to_a_shared_deadline_queues_behind() {
    let (mut q, clock) = queue();
    let a = q.offer('a', 5.0).unwrap();
    q.offer('b', 10.0).unwrap();
    q.reschedule(a, 10.0).unwrap();
    clock.advance(10.0);
    assert_eq!(q.drain_expired(9), vec!['b', 'a']);
}

#[test]
fn refusals_change_nothing() {
    let clock = Rc::new(ManualClock::new(0.0));
    let mut q = DelayQueue::bounded(clock.clone(), 2);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = q.offer("x", bad).unwrap_err();
        assert_eq!(err.refusal, Refusal::NotFinite);
        assert_eq!(err.value, "x");
        assert!(q.offer_at("x", bad).is_err());
    }
    assert!(q.is_empty());
    q.offer("a", 1.0).unwrap();
    q.offer("b", 1.0).unwrap();
    assert_eq!(q.remaining_capacity(), 0);
    let err = q.offer("c", 1.0).unwrap_err();
    assert_eq!((err.refusal, err.value), (Refusal::Full, "c"));
    assert_eq!(q.len(), 2);
    clock.advance(1.0);
    assert_eq!(q.poll(), Some("a"));
    assert!(q.offer("c", 1.0).is_ok());
}

#[test]
fn clear_keeps_old_handles_stale() {
    let (mut q, _clock) = queue();
    let hs: Vec<Handle> = (0..10).map(|i| q.offer(i, i as f64).unwrap()).collect();
    q.clear();
    assert!(q.is_empty());
    let fresh: Vec<Handle> = (0..10).map(|i| q.offer(i, i as f64).unwrap()).collect();
    for h in &hs {
        assert!(!q.contains(*h));
        assert!(!fresh.contains(h));
    }
    q.check();
}

#[test]
fn iter_sorted_keeps_fifo_between_minus_zero_and_zero_as_poll_does() {
    // -0.0 == 0.0: equal deadlines, so FIFO; f64::total_cmp would put -0.0 first.
    let (mut q, _clock) = queue();
    q.offer_at('a', 0.0).unwrap();
    q.offer_at('b', -0.0).unwrap();
    q.offer_at('c', 0.0).unwrap();
    let order: Vec<char> = q.iter_sorted().map(|(_, _, v)| *v).collect();
    assert_eq!(order, ['a', 'b', 'c']);
    assert_eq!(q.drain_expired(3), ['a', 'b', 'c']);
}

#[test]
fn iter_sorted_is_non_destructive_and_ordered() {
    let (mut q, _clock) = queue();
    for (v, d) in [(1, 3.0), (2, 1.0), (3, 2.0), (4, 1.0)] {
        q.offer(v, d).unwrap();
    }
    let order: Vec<i32> = q.iter_sorted().map(|(_, _, v)| *v).collect();
    assert_eq!(order, vec![2, 4, 3, 1]);
    assert_eq!(q.len(), 4);
}

#[test]
fn sequence_renumbering_keeps_fifo() {
    let (mut q, clock) = queue();
    q.offer('a', 5.0).unwrap();
    q.offer('b', 5.0).unwrap();
    q.heap_mut().set_next_seq(u32::MAX - 1);
    q.offer('c', 5.0).unwrap(); // takes seq u32::MAX - 1
    q.offer('d', 5.0).unwrap(); // renumbers first
    q.offer('e', 1.0).unwrap();
    q.check();
    clock.advance(5.0);
    assert_eq!(q.drain_expired(10), vec!['e', 'a', 'b', 'c', 'd']);
}

#[test]
fn sequence_renumbering_keeps_fifo_between_minus_zero_and_zero() {
    let (mut q, _clock) = queue();
    q.offer_at('a', 0.0).unwrap();
    q.offer_at('b', -0.0).unwrap();
    q.heap_mut().set_next_seq(u32::MAX);
    q.offer_at('c', 0.0).unwrap(); // renumbers first
    q.check();
    assert_eq!(q.drain_expired(3), ['a', 'b', 'c']);
}

#[test]
fn a_slot_is_retired_when_its_generation_runs_out() {
    let (mut q, _clock) = queue();
    let h = q.offer(1, 1.0).unwrap();
    let slot = (h.into_raw() & SLOT_MASK) as u32;
    // The generation before the first one again: the slot has been through them all.
    let first = q.heap_mut().first_generation();
    let last_generation = if first == 1 { MAX_GENERATION } else { first - 1 };
    q.heap_mut().set_generation(slot, last_generation);
    let last = Handle::from_raw((u64::from(last_generation) << SLOT_BITS) | u64::from(slot));
    assert_eq!(q.cancel(last), Some(1));
    let next = q.offer(2, 1.0).unwrap();
    assert_ne!(next.into_raw() & SLOT_MASK, u64::from(slot), "retired slot not reused");
    assert!(next.into_raw() < (1u64 << 53));
    q.check();
}

#[test]
fn polling_a_run_reads_the_clock_once() {
    use std::cell::Cell;
    struct Counting(Cell<u32>);
    impl crate::Clock for Counting {
        fn now(&self) -> f64 {
            self.0.set(self.0.get() + 1);
            1000.0
        }
    }
    let mut q = DelayQueue::with_clock(Counting(Cell::new(0)));
    for i in 0..100 {
        q.offer_at(i, i as f64).unwrap();
    }
    assert_eq!(q.drain_expired(usize::MAX).len(), 100);
    assert_eq!(q.clock().0.get(), 1);
}

#[test]
fn system_clock_is_monotonic() {
    let mut q = DelayQueue::new();
    q.offer(1, 0.0).unwrap();
    assert_eq!(q.poll(), Some(1));
}

// --- model-based property tests ---------------------------------------------------
//
// The core and the Driver against obviously correct models. `cargo test` runs a few hundred
// cases each; `PROPTEST_CASES=100000 cargo test --release props` (what `npm run fuzz` runs)
// runs them for minutes.

/// Cases per property: `PROPTEST_CASES` if set (a long run), else `short`.
fn cases(short: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(short)
}

/// Deadline order, FIFO among equal deadlines (-0.0 == 0.0, as the heap compares).
fn key_order(a: (f64, u64), b: (f64, u64)) -> std::cmp::Ordering {
    a.0.partial_cmp(&b.0).expect("finite deadlines").then(a.1.cmp(&b.1))
}

#[derive(Debug, Clone)]
enum Op {
    Offer(f64),
    OfferAt(f64),
    Cancel(usize),
    /// A handle no queue gave out (or another queue's), raw.
    CancelForged(u64),
    Reschedule(usize, f64),
    RescheduleAt(usize, f64),
    ExtendAt(usize, f64),
    Poll,
    Drain(usize),
    Advance(f64),
    Clear,
}

/// Few distinct delays, so that ties are common; -0.0 and 0.0 among them.
fn delay() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-3i32..40).prop_map(f64::from),
        1 => Just(-0.0),
        2 => -1000.0f64..1000.0,
        1 => prop_oneof![Just(0.5), Just(1e-300), Just(2f64.powi(31)), Just(1e15)],
    ]
}

/// Deadlines for offer_at and reschedule_at, refused ones among them (NaN, ±Infinity).
fn deadline() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (990i32..1100).prop_map(f64::from),
        1 => Just(-0.0),
        1 => Just(0.0),
        1 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(f64::MAX), Just(-f64::MAX)],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => delay().prop_map(Op::Offer),
        2 => deadline().prop_map(Op::OfferAt),
        2 => any::<usize>().prop_map(Op::Cancel),
        1 => any::<u64>().prop_map(Op::CancelForged),
        2 => (any::<usize>(), delay()).prop_map(|(i, d)| Op::Reschedule(i, d)),
        1 => (any::<usize>(), deadline()).prop_map(|(i, d)| Op::RescheduleAt(i, d)),
        2 => (any::<usize>(), deadline()).prop_map(|(i, d)| Op::ExtendAt(i, d)),
        4 => Just(Op::Poll),
        1 => (0usize..4).prop_map(Op::Drain),
        3 => (0i32..25).prop_map(|t| Op::Advance(f64::from(t))),
        1 => Just(Op::Clear),
    ]
}

/// The obviously correct model: a Vec kept sorted by (deadline, sequence).
#[derive(Default)]
struct Model {
    items: Vec<(f64, u64, u32, Handle)>, // deadline, seq, value, handle
    seq: u64,
}

impl Model {
    fn insert(&mut self, deadline: f64, value: u32, handle: Handle) {
        self.seq += 1;
        self.items.push((deadline, self.seq, value, handle));
        self.items.sort_by(|a, b| key_order((a.0, a.1), (b.0, b.1)));
    }
    fn remove(&mut self, handle: Handle) -> Option<u32> {
        let i = self.items.iter().position(|x| x.3 == handle)?;
        Some(self.items.remove(i).2)
    }
    fn find(&self, handle: Handle) -> Option<&(f64, u64, u32, Handle)> {
        self.items.iter().find(|x| x.3 == handle)
    }
    fn pop_due(&mut self, now: f64) -> Option<(f64, u64, u32, Handle)> {
        match self.items.first() {
            Some(x) if x.0 <= now => Some(self.items.remove(0)),
            _ => None,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(250), ..ProptestConfig::default() })]

    /// Every operation of the core (bounded or not, refusals and forged handles included)
    /// against a sorted Vec, with the heap's invariants checked after each.
    #[test]
    fn props_queue_behaves_like_a_sorted_vec(
        capacity in prop_oneof![3 => Just(None), 1 => (1usize..8).prop_map(Some)],
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        let clock = Rc::new(ManualClock::new(1000.0));
        let mut q: Q<u32> = match capacity {
            Some(c) => DelayQueue::bounded(clock.clone(), c),
            None => DelayQueue::with_clock(clock.clone()),
        };
        let cap = q.capacity();
        let mut model = Model::default();
        let mut handles: Vec<Handle> = Vec::new(); // every handle ever given out
        let mut next_value = 0u32;
        for op in ops {
            let now = clock.now_for_test();
            match op {
                Op::Offer(d) | Op::OfferAt(d) => {
                    next_value += 1;
                    let at = if let Op::Offer(_) = op { now + d } else { d };
                    let got = if let Op::Offer(_) = op { q.offer(next_value, d) } else { q.offer_at(next_value, d) };
                    match got {
                        Ok(h) => {
                            prop_assert!(at.is_finite() && model.items.len() < cap);
                            prop_assert!(!handles.contains(&h), "handle reused");
                            prop_assert!(h.into_raw() >= 1 << SLOT_BITS && h.into_raw() < 1 << 53);
                            handles.push(h);
                            model.insert(at, next_value, h);
                        }
                        Err(e) => {
                            prop_assert_eq!(e.value, next_value, "the refused value comes back");
                            if at.is_finite() {
                                prop_assert_eq!(e.refusal, Refusal::Full);
                                prop_assert_eq!(model.items.len(), cap);
                            } else {
                                prop_assert_eq!(e.refusal, Refusal::NotFinite);
                            }
                        }
                    }
                }
                Op::Cancel(i) if !handles.is_empty() => {
                    let h = handles[i % handles.len()];
                    prop_assert_eq!(q.cancel(h), model.remove(h));
                }
                Op::CancelForged(raw) => {
                    let h = Handle::from_raw(raw);
                    let expected = if handles.contains(&h) { model.remove(h) } else { None };
                    prop_assert_eq!(q.cancel(h), expected);
                }
                Op::Reschedule(i, d) | Op::RescheduleAt(i, d) if !handles.is_empty() => {
                    let h = handles[i % handles.len()];
                    let at = if let Op::Reschedule(..) = op { now + d } else { d };
                    let got = if let Op::Reschedule(..) = op { q.reschedule(h, d) } else { q.reschedule_at(h, d) };
                    if !at.is_finite() {
                        prop_assert_eq!(got, Err(Refusal::NotFinite));
                    } else {
                        let expected = model.remove(h);
                        prop_assert_eq!(got, Ok(expected.is_some()));
                        if let Some(v) = expected {
                            model.insert(at, v, h);
                        }
                    }
                }
                Op::ExtendAt(i, at) if !handles.is_empty() => {
                    let h = handles[i % handles.len()];
                    let got = q.extend_at(h, at);
                    if !at.is_finite() {
                        prop_assert_eq!(got, Err(Refusal::NotFinite));
                    } else {
                        // Moved only to a later deadline; otherwise its deadline and seq stay.
                        let later = model.find(h).is_some_and(|x| at > x.0);
                        prop_assert_eq!(got, Ok(later));
                        if later {
                            let v = model.remove(h).expect("found");
                            model.insert(at, v, h);
                        }
                    }
                }
                Op::Poll => {
                    let expected = model.pop_due(now);
                    let got = q.poll_expired();
                    prop_assert_eq!(got.as_ref().map(|e| e.value), expected.map(|x| x.2));
                    prop_assert_eq!(got.map(|e| (e.handle, e.deadline)), expected.map(|x| (x.3, x.0)));
                }
                Op::Drain(max) => {
                    let expected: Vec<u32> = std::iter::from_fn(|| model.pop_due(now)).take(max).map(|x| x.2).collect();
                    prop_assert_eq!(q.drain_expired(max), expected);
                }
                Op::Advance(t) => clock.advance(t),
                Op::Clear => {
                    q.clear();
                    model.items.clear();
                }
                _ => {}
            }
            q.check();
            prop_assert_eq!(q.len(), model.items.len());
            prop_assert_eq!(q.remaining_capacity(), cap - model.items.len());
            prop_assert_eq!(q.next_deadline(), model.items.first().map(|x| x.0));
            prop_assert_eq!(q.peek(), model.items.first().map(|x| &x.2));
            prop_assert_eq!(q.head().map(|(h, d, v)| (h, d, *v)), model.items.first().map(|x| (x.3, x.0, x.2)));
            let order: Vec<(Handle, f64, u32)> = q.iter_sorted().map(|(h, d, v)| (h, d, *v)).collect();
            let expected: Vec<(Handle, f64, u32)> = model.items.iter().map(|x| (x.3, x.0, x.2)).collect();
            prop_assert_eq!(order, expected);
            let now = clock.now_for_test();
            let (due, next) = q.expired();
            let model_due: Vec<(Handle, f64)> = model.items.iter().filter(|x| x.0 <= now).map(|x| (x.3, x.0)).collect();
            prop_assert_eq!(due, model_due, "expired(): the items due, in order, none taken");
            prop_assert_eq!(next, model.items.iter().map(|x| x.0).find(|&d| d > now));
            prop_assert_eq!(q.len(), model.items.len());
            for h in handles.iter().rev().take(8) {
                let m = model.find(*h);
                prop_assert_eq!(q.contains(*h), m.is_some());
                prop_assert_eq!(q.deadline_of(*h), m.map(|x| x.0));
                prop_assert_eq!(q.delay_of(*h), m.map(|x| x.0 - now));
            }
        }
    }
}

// --- the Driver against a model --------------------------------------------------

#[derive(Debug, Clone)]
enum DriverOp {
    Offer(f64),
    Cancel(usize),
    Take,
    AddTimeout(f64),
    CancelTimeout(usize),
    PollTimeout,
    Fired,
    Advance(f64),
}

fn driver_op() -> impl Strategy<Value = DriverOp> {
    prop_oneof![
        5 => delay().prop_map(DriverOp::Offer),
        1 => any::<usize>().prop_map(DriverOp::Cancel),
        4 => Just(DriverOp::Take),
        3 => prop_oneof![delay(), Just(f64::NAN), Just(f64::INFINITY)].prop_map(DriverOp::AddTimeout),
        2 => any::<usize>().prop_map(DriverOp::CancelTimeout),
        3 => Just(DriverOp::PollTimeout),
        3 => Just(DriverOp::Fired),
        4 => prop_oneof![(0i32..25).prop_map(f64::from), Just(0.25)].prop_map(DriverOp::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(200), ..ProptestConfig::default() })]

    /// The Driver's rules (when to wake, what a take hands out, take-timeouts, the figures)
    /// against a model: two sorted lists, and counters.
    #[test]
    fn props_driver_behaves_like_its_model(ops in proptest::collection::vec(driver_op(), 1..400)) {
        let clock = Rc::new(ManualClock::new(1000.0));
        let mut d = crate::Driver::new(DelayQueue::with_clock(clock.clone()));
        let mut items = Model::default();
        let mut timeouts = Model::default();
        let (mut item_handles, mut timeout_handles) = (Vec::new(), Vec::new());
        let (mut wakes, mut early, mut taken, mut max_late) = (0u64, 0u64, 0u64, 0f64);
        let mut next = 0u32;
        for op in ops {
            let now = clock.now_for_test();
            match op {
                DriverOp::Offer(delay) => {
                    next += 1;
                    let h = d.items_mut().offer(next, delay).unwrap();
                    item_handles.push(h);
                    items.insert(now + delay, next, h);
                }
                DriverOp::Cancel(i) if !item_handles.is_empty() => {
                    let h = item_handles[i % item_handles.len()];
                    prop_assert_eq!(d.items_mut().cancel(h), items.remove(h));
                }
                DriverOp::Take => {
                    let expected = items.pop_due(now);
                    let got = d.take();
                    prop_assert_eq!(got.as_ref().map(|e| (e.handle, e.value)), expected.map(|x| (x.3, x.2)));
                    if let Some(x) = expected {
                        taken += 1;
                        max_late = max_late.max(now - x.0);
                    }
                }
                DriverOp::AddTimeout(delay) => {
                    let at = now + delay;
                    match d.add_timeout(at) {
                        Ok(h) => {
                            prop_assert!(at.is_finite());
                            prop_assert!(!timeout_handles.contains(&h), "timeout handle reused");
                            timeout_handles.push(h);
                            next += 1;
                            timeouts.insert(at, next, h);
                        }
                        Err(r) => {
                            prop_assert!(!at.is_finite());
                            prop_assert_eq!(r, Refusal::NotFinite);
                        }
                    }
                }
                DriverOp::CancelTimeout(i) if !timeout_handles.is_empty() => {
                    let h = timeout_handles[i % timeout_handles.len()];
                    prop_assert_eq!(d.cancel_timeout(h), timeouts.remove(h).is_some());
                }
                DriverOp::PollTimeout => {
                    prop_assert_eq!(d.poll_timeout(), timeouts.pop_due(now).map(|x| x.3));
                }
                DriverOp::Fired => {
                    let due = items.items.first().is_some_and(|x| x.0 <= now)
                        || timeouts.items.first().is_some_and(|x| x.0 <= now);
                    prop_assert_eq!(d.fired(), due);
                    wakes += 1;
                    if !due {
                        early += 1;
                    }
                }
                DriverOp::Advance(t) => clock.advance(t),
                _ => {}
            }
            prop_assert_eq!(d.wake_at(false), None);
            let wake = match (items.items.first(), timeouts.items.first()) {
                (Some(a), Some(b)) => Some(a.0.min(b.0)),
                (a, b) => a.or(b).map(|x| x.0),
            };
            prop_assert_eq!(d.wake_at(true), wake);
            prop_assert_eq!((d.wakes(), d.early_wakes()), (wakes, early));
            let l = d.lateness();
            prop_assert_eq!(l.count(), taken);
            prop_assert_eq!(l.max(), max_late);
            prop_assert!(l.quantile(0.5) <= l.quantile(0.99) && l.quantile(0.99) <= l.max());
        }
    }
}

trait NowForTest {
    fn now_for_test(&self) -> f64;
}

impl NowForTest for Rc<ManualClock> {
    fn now_for_test(&self) -> f64 {
        crate::Clock::now(&**self)
    }
}

#[test]
fn values_are_dropped_exactly_once() {
    let token = Rc::new(());
    {
        let (mut q, clock) = queue();
        let hs: Vec<Handle> = (0..100).map(|i| q.offer(token.clone(), f64::from(i % 7)).unwrap()).collect();
        assert_eq!(Rc::strong_count(&token), 101);
        for h in hs.iter().step_by(3) {
            drop(q.cancel(*h));
        }
        clock.advance(3.0);
        drop(q.drain_expired(10));
        q.clear();
        assert_eq!(Rc::strong_count(&token), 1, "clear drops every value");
        for i in 0..50 {
            q.offer(token.clone(), f64::from(i)).unwrap();
        }
        assert_eq!(Rc::strong_count(&token), 51);
    }
    assert_eq!(Rc::strong_count(&token), 1, "dropping the queue drops what it held");
}

/// Many thousands of random operations, so that the heap and slot table cross chunk
/// boundaries both ways, against a `BTreeMap` model (the sorted-Vec model is too slow here).
#[test]
fn large_random_run_across_chunk_boundaries() {
    use std::collections::BTreeMap;
    let (mut q, clock) = queue::<u64>();
    let mut model: BTreeMap<(u64, u64), (u64, Handle)> = BTreeMap::new(); // (deadline bits, seq) -> value
    let mut where_is: std::collections::HashMap<Handle, (u64, u64)> = Default::default();
    let mut handles: Vec<Handle> = Vec::new();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut seq = 0u64;
    let (mut max_len, mut min_len_after_max) = (0, usize::MAX);
    for step in 0..60_000u64 {
        // Grow to ~12k items, then shrink, then grow again.
        let phase = (step / 20_000) % 2 == 0;
        match rnd(10) {
            0..=5 if phase || rnd(3) == 0 => {
                let d = rnd(500) as f64;
                let h = q.offer(step, d).unwrap();
                seq += 1;
                let key = ((clock.now_for_test() + d).to_bits(), seq);
                model.insert(key, (step, h));
                where_is.insert(h, key);
                handles.push(h);
            }
            0..=6 => {
                if !handles.is_empty() {
                    let h = handles[rnd(handles.len() as u64) as usize];
                    let expected = where_is.remove(&h).map(|k| model.remove(&k).unwrap().0);
                    assert_eq!(q.cancel(h), expected);
                }
            }
            7 => clock.advance(rnd(40) as f64),
            _ => {
                let now = clock.now_for_test();
                let expected = match model.first_key_value() {
                    Some((k, _)) if f64::from_bits(k.0) <= now => model.pop_first(),
                    _ => None,
                };
                if let Some((_, (_, h))) = expected {
                    where_is.remove(&h);
                }
                assert_eq!(q.poll(), expected.map(|(_, (v, _))| v));
            }
        }
        assert_eq!(q.len(), model.len());
        max_len = max_len.max(q.len());
        if step > 20_000 && step < 40_000 {
            min_len_after_max = min_len_after_max.min(q.len());
        }
        if step % 2_000 == 0 {
            q.check();
            assert!(q.iter_sorted().map(|(_, _, v)| *v).eq(model.values().map(|(v, _)| *v)));
        }
    }
    q.check();
    assert!(max_len > 2 * 4096 && min_len_after_max < 4096, "crossed chunk boundaries: {max_len}, {min_len_after_max}");
}

#[test]
fn a_handle_names_nothing_in_another_queue() {
    // The same operations on two queues: same slots, same reuse counts, different tags.
    let (mut a, _) = queue();
    let (mut b, _) = queue();
    let ha: Vec<Handle> = (0..100).map(|i| a.offer(i, 10.0).unwrap()).collect();
    let hb: Vec<Handle> = (0..100).map(|i| b.offer(i, 10.0).unwrap()).collect();
    for (x, y) in ha.iter().zip(&hb) {
        assert_ne!(x, y);
        assert_eq!(x.into_raw() & SLOT_MASK, y.into_raw() & SLOT_MASK, "same slot");
        assert!(!b.contains(*x) && !a.contains(*y));
        assert!(x.into_raw() >= 1 << SLOT_BITS && x.into_raw() < 1 << 53);
    }
    assert_eq!(b.cancel(ha[7]), None);
    assert_eq!(b.len(), 100);
}

#[test]
fn generations_come_round_from_the_top_and_handles_stay_fresh() {
    let (mut q, _clock) = queue();
    let h = q.offer(1, 1.0).unwrap();
    let slot = (h.into_raw() & SLOT_MASK) as u32;
    if q.heap_mut().first_generation() == MAX_GENERATION {
        return; // this queue's tag starts at the top already (cannot happen: tags step by 2^15)
    }
    q.heap_mut().set_generation(slot, MAX_GENERATION);
    let top = Handle::from_raw((u64::from(MAX_GENERATION) << SLOT_BITS) | u64::from(slot));
    assert_eq!(q.cancel(top), Some(1));
    let next = q.offer(2, 1.0).unwrap();
    if q.heap_mut().first_generation() == 1 {
        // Tag 0 (the process's first queue: nextest runs each test in its own process): the
        // generation after the top is the slot's first again, so the slot is retired.
        assert_ne!(next.into_raw() & SLOT_MASK, u64::from(slot), "a retired slot is not reused");
    } else {
        assert_eq!(next.into_raw(), (1 << SLOT_BITS) | u64::from(slot), "generation 1 after the top, same slot");
    }
    assert_eq!(q.cancel(top), None);
    assert_eq!(q.cancel(next), Some(2));
    assert_eq!(q.cancel(Handle::from_raw(u64::from(slot))), None, "generation 0 names nothing");
    q.check();
}

#[test]
fn tags_sit_in_the_high_bits_and_wrap_after_4096() {
    use crate::heap::Heap;
    let mut first = Vec::new();
    for tag in [0u32, 1, 4095, 4096] {
        let mut h: Heap<()> = Heap::new(tag);
        let slot = h.insert(1.0, ()).unwrap();
        let raw = h.handle_of(slot);
        assert!(raw < 1 << 53);
        assert_eq!(raw >> (SLOT_BITS + 15), u64::from(tag % 4096), "tag {tag} in the top 12 bits");
        first.push(h.first_generation());
    }
    assert_eq!(first[0], first[3], "tags are taken modulo 2^12");
    assert!(first.iter().all(|g| (1..=MAX_GENERATION).contains(g)));
}

#[derive(Debug, Clone)]
enum HeapOp {
    Insert(f64),
    Remove(usize),
    Update(usize, f64),
    Pop,
}

fn heap_op() -> impl Strategy<Value = HeapOp> {
    let deadline = (0i32..30).prop_map(f64::from);
    prop_oneof![
        5 => deadline.clone().prop_map(HeapOp::Insert),
        2 => any::<usize>().prop_map(HeapOp::Remove),
        1 => (any::<usize>(), deadline).prop_map(|(i, d)| HeapOp::Update(i, d)),
        2 => Just(HeapOp::Pop),
    ]
}

/// The heap at any arity (`cargo bench` compares 2, 4 and 8) against the sorted-Vec model:
/// every pop yields the model's first item, and the invariants hold after each step.
fn heap_agrees_with_the_model<const A: usize>(ops: &[HeapOp]) -> Result<(), TestCaseError> {
    let mut heap = crate::heap::Heap::<u32, A>::default();
    let mut model: Vec<(f64, u64, u32)> = Vec::new(); // deadline, seq, slot
    let mut seq = 0u64;
    let sort = |m: &mut Vec<(f64, u64, u32)>| m.sort_by(|a, b| key_order((a.0, a.1), (b.0, b.1)));
    for op in ops {
        match *op {
            HeapOp::Insert(d) => {
                let slot = heap.insert(d, 0).unwrap();
                seq += 1;
                model.push((d, seq, slot));
                sort(&mut model);
            }
            HeapOp::Remove(i) if !model.is_empty() => {
                let (d, _, slot) = model.remove(i % model.len());
                prop_assert_eq!(heap.remove(slot).0.deadline, d);
            }
            HeapOp::Update(i, d) if !model.is_empty() => {
                let k = i % model.len();
                heap.update(model[k].2, d);
                seq += 1;
                model[k] = (d, seq, model[k].2);
                sort(&mut model);
            }
            HeapOp::Pop => {
                let got = heap.pop().map(|(e, _)| (e.deadline, e.slot));
                let expected = (!model.is_empty()).then(|| model.remove(0)).map(|(d, _, s)| (d, s));
                prop_assert_eq!(got, expected);
            }
            _ => {}
        }
        heap.check();
        prop_assert_eq!(heap.len(), model.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(200), ..ProptestConfig::default() })]
    #[test]
    fn heaps_of_every_benchmarked_arity_keep_order(ops in proptest::collection::vec(heap_op(), 1..400)) {
        heap_agrees_with_the_model::<2>(&ops)?;
        heap_agrees_with_the_model::<4>(&ops)?;
        heap_agrees_with_the_model::<8>(&ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), ..ProptestConfig::default() })]

    /// The crate's one sort (a heapsort) against the standard library's, on keys with many
    /// equal deadlines, -0.0 beside 0.0 among them: earlier deadline first, then lower seq.
    #[test]
    fn the_sort_orders_as_the_heap_does(keys in proptest::collection::vec((0u8..6, 0u32..1000), 0..200)) {
        let mut entries: Vec<crate::heap::Entry> = keys
            .iter()
            .enumerate()
            .map(|(i, &(d, _))| crate::heap::Entry {
                deadline: if d == 0 { -0.0 } else { f64::from(d - 1) },
                seq: i as u32 * 7 % 1009,
                slot: i as u32,
            })
            .collect();
        let mut model = entries.clone();
        model.sort_by(|a, b| (a.deadline + 0.0).total_cmp(&(b.deadline + 0.0)).then(a.seq.cmp(&b.seq)));
        crate::heap::sort(&mut entries);
        prop_assert_eq!(entries.iter().map(|e| e.slot).collect::<Vec<_>>(), model.iter().map(|e| e.slot).collect::<Vec<_>>());
    }
}
