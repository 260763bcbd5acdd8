//! [`Lateness`]: how long after their deadlines items were handed out, as a histogram
//! with about 3% relative precision, so that p50/p99 cost O(1) memory per queue.
//!
//! ```
//! use tarry_queue::Lateness;
//! let mut l = Lateness::default();
//! for ms in [0.2, 0.4, 1.0, 3.0, 50.0] { l.record(ms); }
//! assert_eq!(l.count(), 5);
//! assert!((l.quantile(0.5) - 1.0).abs() < 0.05);
//! assert_eq!(l.max(), 50.0);
//! ```

use alloc::boxed::Box;
use alloc::vec;

/// Buckets below 1 ms, each 1/64 ms wide.
const FINE: usize = 64;
/// Sub-buckets per power of two from 1 ms up.
const SUB: usize = 32;
/// Powers of two covered from 1 ms up (to about 2^31 ms).
const OCTAVES: usize = 32;

/// A lateness histogram in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Lateness {
    buckets: Option<Box<[u32]>>,
    count: u64,
    max: f64,
}

impl Lateness {
    /// Records one lateness (negative values count as 0).
    pub fn record(&mut self, ms: f64) {
        let ms = if ms > 0.0 { ms } else { 0.0 };
        let buckets = self.buckets.get_or_insert_with(|| vec![0; FINE + SUB * OCTAVES].into_boxed_slice());
        let i = bucket_of(ms).min(buckets.len() - 1);
        buckets[i] = buckets[i].saturating_add(1);
        self.count += 1;
        if ms > self.max {
            self.max = ms;
        }
    }

    /// Items recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest lateness recorded (0 when none).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The `q`-quantile (0 ≤ q ≤ 1), as the middle of its bucket, never above the max;
    /// 0 when nothing was recorded.
    pub fn quantile(&self, q: f64) -> f64 {
        let Some(buckets) = &self.buckets else { return 0.0 };
        let share = q.clamp(0.0, 1.0) * self.count as f64;
        // Rounded up without libm's ceil (the wasm build links no float library).
        let whole = share as u64;
        let rank = (whole + u64::from((whole as f64) < share)).max(1);
        let mut seen = 0u64;
        for (i, &n) in buckets.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                let (lo, hi) = bounds_of(i);
                return ((lo + hi) / 2.0).min(self.max);
            }
        }
        self.max
    }
}

fn bucket_of(ms: f64) -> usize {
    if ms < 1.0 {
        (ms * FINE as f64) as usize
    } else {
        // floor(log2(ms)) and 2^that from the exponent bits (ms >= 1, so it is normal).
        let exponent = (ms.to_bits() >> 52) & 0x7ff;
        let octave = (exponent - 1023) as usize;
        let base = f64::from_bits(exponent << 52);
        let sub = ((ms / base - 1.0) * SUB as f64) as usize;
        FINE + octave * SUB + sub.min(SUB - 1)
    }
}

fn bounds_of(i: usize) -> (f64, f64) {
    if i < FINE {
        (i as f64 / FINE as f64, (i + 1) as f64 / FINE as f64)
    } else {
        let octave = (i - FINE) / SUB;
        let sub = ((i - FINE) % SUB) as f64;
        let base = f64::from_bits((1023 + octave as u64) << 52);
        (base * (1.0 + sub / SUB as f64), base * (1.0 + (sub + 1.0) / SUB as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_bucket() {
        let mut l = Lateness::default();
        for i in 0..1000 {
            l.record(i as f64 / 10.0); // 0 .. 99.9 ms
        }
        assert!((l.quantile(0.5) - 50.0).abs() < 50.0 * 0.04, "{}", l.quantile(0.5));
        assert!((l.quantile(0.99) - 99.0).abs() < 99.0 * 0.04, "{}", l.quantile(0.99));
        assert_eq!(l.max(), 99.9);
        assert_eq!(Lateness::default().quantile(0.5), 0.0);
    }

    #[test]
    fn buckets_cover_their_values() {
        for v in [0.0, 0.01, 0.99, 1.0, 1.5, 2.0, 3.3, 1000.0, 1e9] {
            let (lo, hi) = bounds_of(bucket_of(v));
            assert!(lo <= v && v < hi, "{v} in [{lo}, {hi})");
        }
    }
}
