//! Native benchmarks of tarry's core against tokio-util's `time::DelayQueue`, and of the
//! heap's arity. Run with `cargo bench` (a few minutes on 2 cores); a subset with e.g.
//! `cargo bench -- insert/`.
//!
//! Fairness: neither side reads a clock while being measured. tarry gets `offer_at` with
//! precomputed deadlines on a `ManualClock`; tokio-util gets `insert_at` with precomputed
//! `Instant`s on a current-thread runtime with paused time. Both get the same random
//! deadlines in [1 h, 2 h], the same removal order and `u32` values. Expired items are
//! taken after moving each clock past every deadline (`ManualClock::advance`,
//! `tokio::time::advance`); tokio-util's `poll_expired` is called with a no-op waker
//! inside the runtime, the way a task's poll would call it.
//!
//! Groups (N = 10^4, 10^5, 10^6; throughput in items):
//! * `insert/{tarry,tokio}/N`: N inserts into an empty queue.
//! * `remove/{tarry,tokio}/N`: N/2 removals by handle/key in random order from N.
//! * `pop/{tarry,tokio}/N`: N expired items taken one at a time.
//! * `churn/{tarry,tokio}`: 10^5 pending, then 10^6 × (insert one, remove a random one).
//! * `arity/{2,4,8}/{insert,remove,pop}/10^6`: tarry's own heap (`src/heap.rs`, whose arity
//!   is a const parameter, 4 by default) at three arities, to show what the choice buys.

use std::hint::black_box;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use tarry_queue::{DelayQueue, Handle, Heap, ManualClock};
use tokio::runtime::Runtime;
use tokio_util::time::{delay_queue::Key, DelayQueue as TokioQueue};

const HOUR_MS: f64 = 3_600_000.0;
const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// splitmix64: the same reproducible numbers for both sides.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// N delays in ms, uniform in [1 h, 2 h).
fn delays(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| HOUR_MS + rng.unit() * HOUR_MS).collect()
}

/// A random permutation of 0..n (Fisher–Yates).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng(seed);
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.below(i + 1));
    }
    p
}

fn ms(d: f64) -> Duration {
    Duration::from_secs_f64(d / 1000.0)
}

fn paused_runtime() -> Runtime {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
    rt
}

struct NoopWake;
impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}

fn tarry_filled(deadlines: &[f64]) -> (DelayQueue<u32, ManualClock>, Vec<Handle>) {
    let mut q = DelayQueue::with_clock(ManualClock::new(0.0));
    let hs = deadlines.iter().enumerate().map(|(i, &d)| q.offer_at(i as u32, d).unwrap()).collect();
    (q, hs)
}

fn tokio_filled(rt: &Runtime, delays: &[f64]) -> (TokioQueue<u32>, Vec<Key>) {
    let _in = rt.enter();
    let start = tokio::time::Instant::now();
    let mut q = TokioQueue::with_capacity(delays.len());
    let keys = delays.iter().enumerate().map(|(i, &d)| q.insert_at(i as u32, start + ms(d))).collect();
    (q, keys)
}

fn configure<'a>(c: &'a mut Criterion, name: &str) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(1));
    g
}

fn insert(c: &mut Criterion) {
    let rt = paused_runtime();
    let mut g = configure(c, "insert");
    for n in SIZES {
        let ds = delays(n, 1);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("tarry", n), &ds, |b, ds| {
            b.iter_batched(
                || DelayQueue::with_clock(ManualClock::new(0.0)),
                |mut q| {
                    for (i, &d) in ds.iter().enumerate() {
                        black_box(q.offer_at(i as u32, d).unwrap());
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
        g.bench_with_input(BenchmarkId::new("tokio", n), &ds, |b, ds| {
            let _in = rt.enter();
            let start = tokio::time::Instant::now();
            let whens: Vec<_> = ds.iter().map(|&d| start + ms(d)).collect();
            b.iter_batched(
                TokioQueue::new,
                |mut q| {
                    for (i, &w) in whens.iter().enumerate() {
                        black_box(q.insert_at(i as u32, w));
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn remove(c: &mut Criterion) {
    let rt = paused_runtime();
    let mut g = configure(c, "remove");
    for n in SIZES {
        let ds = delays(n, 2);
        let order: Vec<usize> = permutation(n, 3).into_iter().take(n / 2).collect();
        g.throughput(Throughput::Elements((n / 2) as u64));
        g.bench_with_input(BenchmarkId::new("tarry", n), &ds, |b, ds| {
            b.iter_batched(
                || tarry_filled(ds),
                |(mut q, hs)| {
                    for &i in &order {
                        black_box(q.cancel(hs[i]).unwrap());
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
        g.bench_with_input(BenchmarkId::new("tokio", n), &ds, |b, ds| {
            let _in = rt.enter();
            b.iter_batched(
                || tokio_filled(&rt, ds),
                |(mut q, keys)| {
                    for &i in &order {
                        black_box(q.remove(&keys[i]));
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn pop(c: &mut Criterion) {
    let rt = paused_runtime();
    let mut g = configure(c, "pop");
    let waker = Waker::from(Arc::new(NoopWake));
    for n in SIZES {
        let ds = delays(n, 4);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("tarry", n), &ds, |b, ds| {
            b.iter_batched(
                || {
                    let (q, _) = tarry_filled(ds);
                    q.clock().advance(3.0 * HOUR_MS);
                    q
                },
                |mut q| {
                    let mut last = f64::NEG_INFINITY;
                    for _ in 0..ds.len() {
                        let e = q.poll_expired().unwrap();
                        assert!(e.deadline >= last);
                        last = e.deadline;
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
        g.bench_with_input(BenchmarkId::new("tokio", n), &ds, |b, ds| {
            let mut cx = Context::from_waker(&waker);
            b.iter_batched(
                || {
                    let (q, _) = tokio_filled(&rt, ds);
                    rt.block_on(tokio::time::advance(ms(3.0 * HOUR_MS)));
                    q
                },
                |mut q| {
                    let _in = rt.enter();
                    for _ in 0..ds.len() {
                        match q.poll_expired(&mut cx) {
                            Poll::Ready(Some(e)) => black_box(e),
                            other => panic!(
                                "tokio-util DelayQueue: expected an expired item, got {:?}",
                                other.map(|o| o.map(|_| ()))
                            ),
                        };
                    }
                    q
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

const CHURN_PENDING: usize = 100_000;
const CHURN_STEPS: usize = 1_000_000;

fn churn(c: &mut Criterion) {
    let rt = paused_runtime();
    let mut g = configure(c, "churn");
    let ds = delays(CHURN_PENDING + CHURN_STEPS, 5);
    let mut rng = Rng(6);
    let victims: Vec<usize> = (0..CHURN_STEPS).map(|_| rng.below(CHURN_PENDING)).collect();
    g.throughput(Throughput::Elements(CHURN_STEPS as u64));
    g.bench_function("tarry", |b| {
        b.iter_batched(
            || tarry_filled(&ds[..CHURN_PENDING]),
            |(mut q, mut hs)| {
                for (step, &v) in victims.iter().enumerate() {
                    let i = CHURN_PENDING + step;
                    let h = q.offer_at(i as u32, ds[i]).unwrap();
                    black_box(q.cancel(std::mem::replace(&mut hs[v], h)).unwrap());
                }
                q
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("tokio", |b| {
        let _in = rt.enter();
        let start = tokio::time::Instant::now();
        b.iter_batched(
            || tokio_filled(&rt, &ds[..CHURN_PENDING]),
            |(mut q, mut keys)| {
                for (step, &v) in victims.iter().enumerate() {
                    let i = CHURN_PENDING + step;
                    let k = q.insert_at(i as u32, start + ms(ds[i]));
                    black_box(q.remove(&std::mem::replace(&mut keys[v], k)));
                }
                q
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn arity_case<const A: usize>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    ds: &[f64],
    order: &[usize],
) {
    let n = ds.len();
    let filled = || {
        let mut h = Heap::<(), A>::default();
        let slots: Vec<u32> = ds.iter().map(|&d| h.insert(d, ()).unwrap()).collect();
        (h, slots)
    };
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new(format!("{A}/insert"), n), |b| {
        b.iter_batched(
            Heap::<(), A>::default,
            |mut h| {
                for &d in ds {
                    black_box(h.insert(d, ()).unwrap());
                }
                h
            },
            BatchSize::PerIteration,
        )
    });
    g.throughput(Throughput::Elements(order.len() as u64));
    g.bench_function(BenchmarkId::new(format!("{A}/remove"), n), |b| {
        b.iter_batched(
            filled,
            |(mut h, slots)| {
                for &i in order {
                    h.remove(slots[i]);
                }
                h
            },
            BatchSize::PerIteration,
        )
    });
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new(format!("{A}/pop"), n), |b| {
        b.iter_batched(
            filled,
            |(mut h, _)| {
                while let Some(x) = h.pop() {
                    black_box(x);
                }
                h
            },
            BatchSize::PerIteration,
        )
    });
}

fn arity(c: &mut Criterion) {
    let n = 1_000_000;
    let ds = delays(n, 7);
    let order: Vec<usize> = permutation(n, 8).into_iter().take(n / 2).collect();
    let mut g = configure(c, "arity");
    arity_case::<2>(&mut g, &ds, &order);
    arity_case::<4>(&mut g, &ds, &order);
    arity_case::<8>(&mut g, &ds, &order);
    g.finish();
}

criterion_group!(benches, insert, remove, pop, churn, arity);
criterion_main!(benches);
