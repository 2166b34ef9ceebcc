//! Latencies per interval of a phase, so a percentile over time (p99 per second) can be
//! computed after merging ranks, exactly as the phase's own histogram is.
//!
//! A full HDR histogram per interval would cost ~200 KiB each; instead each interval keeps
//! sparse counts of log-linear buckets (128 per power of two, so a bucket's top is within
//! 0.8% of every value in it). Intervals start at 10 ms and double (pairs merge) whenever the
//! phase outlasts `MAX_INTERVALS`, so memory stays bounded by intervals x distinct buckets.

use std::collections::HashMap;

pub const MAX_INTERVALS: u64 = 8192;
const FIRST_WIDTH_NS: u64 = 10_000_000;
const SUB_BUCKET_BITS: u32 = 7;

/// Buckets of one power of two: values below 2^8 are exact, above it 128 per octave.
const BUCKETS: usize = (64 - SUB_BUCKET_BITS as usize) * 128 + 256;

#[derive(Debug, Clone)]
pub struct LatencySeries {
    pub width_ns: u64,
    /// (interval index, bucket top in ns) -> operations, for intervals already left.
    counts: HashMap<(u64, u64), u64>,
    /// Dense counts of the interval being filled: a lane completes its operations in time
    /// order, so a per-op hash insert is avoided and the interval is folded in when left.
    current: Option<u64>,
    dense: Vec<u32>,
    /// The buckets of `dense` that are not zero, so folding an interval in does not scan
    /// thousands of empty ones (32 lanes leave an interval 3,200 times a second).
    touched: Vec<u32>,
}

impl Default for LatencySeries {
    fn default() -> Self {
        Self {
            width_ns: FIRST_WIDTH_NS,
            counts: HashMap::new(),
            current: None,
            dense: Vec::new(),
            touched: Vec::new(),
        }
    }
}

fn bucket_index(value: u64) -> usize {
    let bits = 64 - value.leading_zeros();
    if bits <= SUB_BUCKET_BITS + 1 {
        return value as usize;
    }
    let shift = bits - SUB_BUCKET_BITS - 1;
    shift as usize * 128 + (value >> shift) as usize
}

fn index_top(index: usize) -> u64 {
    if index < 256 {
        return index as u64;
    }
    let (shift, mantissa) = (index / 128 - 1, (index % 128 + 128) as u64);
    (mantissa << shift) | ((1u64 << shift) - 1)
}

/// The largest value that falls in `value`'s bucket (what a percentile reports, as HDR does).
pub fn bucket_top(value: u64) -> u64 {
    index_top(bucket_index(value))
}

impl LatencySeries {
    /// One operation that completed `at_ns` after t0 and took `latency_ns`.
    pub fn add(&mut self, at_ns: u64, latency_ns: u64) {
        while at_ns / self.width_ns >= MAX_INTERVALS {
            self.coarsen();
        }
        let interval = at_ns / self.width_ns;
        if self.current != Some(interval) {
            self.fold_current();
            self.dense.resize(BUCKETS, 0);
            self.current = Some(interval);
        }
        let index = bucket_index(latency_ns);
        let slot = &mut self.dense[index];
        if *slot == 0 {
            self.touched.push(index as u32);
        }
        *slot = slot.saturating_add(1);
    }

    fn fold_current(&mut self) {
        if let Some(interval) = self.current.take() {
            for index in self.touched.drain(..) {
                let n = std::mem::take(&mut self.dense[index as usize]);
                *self.counts.entry((interval, index_top(index as usize))).or_default() += u64::from(n);
            }
        }
    }

    fn coarsen(&mut self) {
        self.fold_current();
        let old = std::mem::take(&mut self.counts);
        for ((interval, bucket), n) in old {
            *self.counts.entry((interval / 2, bucket)).or_default() += n;
        }
        self.width_ns *= 2;
    }

    pub fn merge(&mut self, mut other: LatencySeries) {
        self.fold_current();
        other.fold_current();
        while other.width_ns < self.width_ns {
            other.coarsen();
        }
        while self.width_ns < other.width_ns {
            self.coarsen();
        }
        for (key, n) in other.counts {
            *self.counts.entry(key).or_default() += n;
        }
    }

    /// (interval, bucket top, count) triples, sorted, for the runner to merge across ranks.
    pub fn triples(&self) -> Vec<(u64, u64, u64)> {
        let mut all = self.clone();
        all.fold_current();
        let mut out: Vec<_> = all.counts.iter().map(|(&(i, b), &n)| (i, b, n)).collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_top_bounds_every_value_within_one_percent() {
        for v in (1..2_000_000u64)
            .step_by(997)
            .chain([u64::from(u32::MAX), 60_000_000_000])
        {
            let top = bucket_top(v);
            assert!(top >= v, "{v} -> {top}");
            assert!((top - v) as f64 <= v as f64 / 128.0, "{v} -> {top}");
            assert_eq!(bucket_top(top), top);
        }
    }

    #[test]
    fn merging_equals_the_series_of_the_union() {
        let (mut a, mut b, mut all) = (
            LatencySeries::default(),
            LatencySeries::default(),
            LatencySeries::default(),
        );
        for i in 0..200_000u64 {
            let (at, lat) = (i * 1_000_000, 1_000 + (i * 7919) % 50_000);
            if i % 3 == 0 {
                a.add(at, lat)
            } else {
                b.add(at, lat)
            }
            all.add(at, lat);
        }
        assert!(
            all.width_ns > FIRST_WIDTH_NS,
            "200 s must have coarsened the 10 ms intervals"
        );
        a.merge(b);
        assert_eq!(a.width_ns, all.width_ns);
        assert_eq!(a.triples(), all.triples());
        assert_eq!(a.triples().iter().map(|t| t.2).sum::<u64>(), 200_000);
    }
}
