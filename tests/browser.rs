//! The core in a real browser: headless Chromium, through chromedriver, running the wasm
//! that `cargo test --target wasm32-unknown-unknown` builds (CHROMEDRIVER=/usr/bin/chromedriver;
//! Chromium's arguments come from webdriver.json at the repository root).
//!
//! The queue is driven here the way the npm package's binding drives it: on the page's own
//! monotonic clock, `performance.now()`, with one browser timer (`setTimeout`, through
//! gloo-timers) armed for the head's deadline and re-armed after each wake-up. What a
//! browser adds to the native tests: its timers, its clock's coarse resolution, a page
//! blocked by a long task, and V8's wasm engine at 10^5 items.
#![cfg(target_arch = "wasm32")]

use std::cell::Cell;
use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;
use tarry_queue::{Clock, DelayQueue, Expired, ManualClock};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen]
extern "C" {
    // Spelled apart from the crate's own import of the same function, which it would clash with.
    #[wasm_bindgen(js_namespace = ["globalThis", "performance"], js_name = now)]
    fn performance_now() -> f64;
}

/// The page's monotonic clock, counting how often the queue reads it.
#[derive(Default)]
struct PageClock {
    reads: Cell<u32>,
}

impl Clock for PageClock {
    fn now(&self) -> f64 {
        self.reads.set(self.reads.get() + 1);
        performance_now()
    }
}

/// What a driven run produced: each item with the time it came out, and the timer's work.
struct Run<T> {
    out: Vec<(Expired<T>, f64)>,
    arms: u32,
    early: u32,
}

/// The binding's loop: one timer for the head's deadline (rounded up, as the binding does);
/// when it fires, take everything due; a wake-up that finds nothing due re-arms.
async fn drive<T, C: Clock>(q: &mut DelayQueue<T, C>, until: usize) -> Run<T> {
    let mut run = Run { out: Vec::new(), arms: 0, early: 0 };
    while run.out.len() < until {
        let Some(deadline) = q.next_deadline() else { break };
        let wait = (deadline - performance_now()).ceil().max(0.0);
        TimeoutFuture::new(wait as u32).await;
        run.arms += 1;
        let before = run.out.len();
        while let Some(e) = q.poll_expired() {
            run.out.push((e, performance_now()));
        }
        if run.out.len() == before {
            run.early += 1;
        }
    }
    run
}

/// Deadline order, and offer order (the values here) among equal deadlines.
fn assert_in_order(out: &[(Expired<usize>, f64)]) {
    for w in out.windows(2) {
        let (a, b) = (&w[0].0, &w[1].0);
        assert!(
            a.deadline < b.deadline || (a.deadline == b.deadline && a.value < b.value),
            "item {} (due {}) came before item {} (due {})",
            a.value,
            a.deadline,
            b.value,
            b.deadline
        );
    }
}

#[wasm_bindgen_test]
fn runs_in_a_page() {
    // run_in_browser: a window with a document, not Node or a worker.
    let document = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("document")).unwrap();
    assert!(document.is_object(), "no document: not running in a browser page");
}

#[wasm_bindgen_test]
async fn a_browser_timer_on_the_page_clock_hands_items_out_in_order_and_never_early() {
    let clock = Rc::new(PageClock::default());
    let mut q = DelayQueue::with_clock(clock.clone());
    // 120 items due 0..=177 ms, shuffled, each delay twice (ties are FIFO).
    for i in 0..120 {
        q.offer(i, ((i * 7) % 60) as f64 * 3.0).unwrap();
    }
    let run = drive(&mut q, 120).await;

    assert_eq!(run.out.len(), 120);
    assert!(q.is_empty());
    assert_in_order(&run.out);
    let mut worst = 0.0f64;
    for (e, at) in &run.out {
        // Exact: the queue read the same clock and found the deadline passed.
        assert!(*at >= e.deadline, "item {} came {} ms early", e.value, e.deadline - at);
        worst = worst.max(at - e.deadline);
    }
    assert!(worst < 1000.0, "an item came {worst} ms late"); // wide: a busy 2-core machine
                                                             // One timer per distinct deadline at most, plus one per early wake-up.
    assert!(run.arms <= 60 + run.early, "{} arms ({} early) for 60 deadlines", run.arms, run.early);
    console_log!(
        "page clock: 120 items, worst lateness {worst:.2} ms, {} timer arms, {} early wake-ups",
        run.arms,
        run.early
    );
}

#[wasm_bindgen_test]
async fn cancel_and_reschedule_while_the_timer_waits() {
    let mut q = DelayQueue::with_clock(PageClock::default());
    let paid = q.offer("paid", 40.0).unwrap();
    let extended = q.offer("extended", 60.0).unwrap();
    let urgent = q.offer("urgent", 500.0).unwrap();
    let plain = q.offer("plain", 80.0).unwrap();

    TimeoutFuture::new(10).await;
    assert_eq!(q.cancel(paid), Some("paid"));
    assert_eq!(q.cancel(paid), None, "a cancelled handle names nothing");
    let moved_at = performance_now();
    assert_eq!(q.reschedule(extended, 150.0), Ok(true));
    assert_eq!(q.reschedule(urgent, 0.0), Ok(true));
    assert!(q.deadline_of(extended).unwrap() >= moved_at + 150.0);

    let run = drive(&mut q, 3).await;
    let order: Vec<_> = run.out.iter().map(|(e, _)| e.value).collect();
    assert_eq!(order, ["urgent", "plain", "extended"]);
    for (e, at) in &run.out {
        assert!(*at >= e.deadline, "{} came {} ms early", e.value, e.deadline - at);
    }
    assert!(run.out[2].1 >= moved_at + 150.0, "the extended item kept its old deadline");
    assert_eq!(q.cancel(plain), None, "a handle of an item taken names nothing");
    assert_eq!(q.reschedule(extended, 10.0), Ok(false));
    assert!(q.is_empty());
}

#[wasm_bindgen_test]
async fn a_page_blocked_past_every_deadline_gets_them_all_at_once_in_order() {
    let clock = Rc::new(PageClock::default());
    let mut q = DelayQueue::with_clock(clock.clone());
    for i in 0..1000 {
        q.offer(i, ((i * 37) % 250) as f64).unwrap(); // 0..249 ms, each delay four times
    }
    // A long task: no timer can fire while it runs.
    let blocked = performance_now();
    while performance_now() - blocked < 400.0 {}
    let unblocked = performance_now();

    let reads = clock.reads.get();
    let run = drive(&mut q, 1000).await;
    let reads = clock.reads.get() - reads;

    assert_eq!(run.out.len(), 1000, "none lost");
    assert_in_order(&run.out);
    assert_eq!(run.arms, 1, "one wake-up takes every overdue item");
    let first = run.out[0].1;
    let last = run.out[999].1;
    assert!(first >= unblocked);
    assert!(last - first < 100.0, "the batch took {} ms", last - first);
    // Anything due by a past reading is due now (the clock is monotonic): a batch of
    // expired items costs one clock read, not one per item (each read costs ~70 ns).
    assert!(reads <= 2, "{reads} clock reads to take 1000 overdue items");
}

#[wasm_bindgen_test]
fn a_hundred_thousand_items_in_the_browsers_wasm_engine() {
    const N: usize = 100_000;
    let clock = Rc::new(ManualClock::new(0.0));
    let mut q = DelayQueue::with_clock(clock.clone());
    let started = performance_now();
    // Deadlines from a fixed LCG over 0..10^6 ms, many of them shared.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut handles = Vec::with_capacity(N);
    for i in 0..N {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        handles.push(q.offer(i, ((x >> 33) % 1_000_000) as f64).unwrap());
    }
    // Every third order is paid: cancelled by handle.
    for (i, h) in handles.iter().enumerate().step_by(3) {
        assert_eq!(q.cancel(*h), Some(i));
    }
    assert_eq!(q.len(), N - N.div_ceil(3));
    assert!(q.poll().is_none(), "nothing is due before the clock moves");

    clock.advance(500_000.0);
    let mut out = Vec::new();
    while let Some(e) = q.poll_expired() {
        assert!(e.deadline <= 500_000.0);
        out.push((e, 0.0));
    }
    let half = out.len();
    clock.advance(500_000.0);
    while let Some(e) = q.poll_expired() {
        out.push((e, 0.0));
    }
    let ms = performance_now() - started;

    assert!(q.is_empty());
    assert_eq!(out.len(), N - N.div_ceil(3));
    assert!(half > 0 && half < out.len());
    assert!(out.iter().all(|(e, _)| e.value % 3 != 0), "a cancelled item came out");
    assert_in_order(&out);
    console_log!("10^5 offers, 33,334 cancels and 66,666 polls in the browser: {ms:.1} ms");
}
