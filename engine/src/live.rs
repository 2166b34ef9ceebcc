//! What this process has transferred so far, readable while a plan runs: the counters a live
//! status line samples once a second (the executor itself is locked until its plan ends).
//!
//! Relaxed atomics, one add per counter per operation: no lock, and no order is needed, since
//! a reader only wants a recent total. Latencies go into log-linear buckets (16 per power of
//! two, so a bucket's top is within 6.25% of every value in it), enough for a p99 "so far".

use std::sync::atomic::{AtomicU64, Ordering};

const SUB_BUCKET_BITS: u32 = 4;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// Values below 2^5 are exact; then 16 buckets per power of two up to 2^64 (u64::MAX falls in
/// the last one).
pub const BUCKETS: usize = (64 - SUB_BUCKET_BITS as usize - 1) * SUB_BUCKETS + 2 * SUB_BUCKETS;

static BYTES: AtomicU64 = AtomicU64::new(0);
static OPS: AtomicU64 = AtomicU64::new(0);
static LATENCY: [AtomicU64; BUCKETS] = [const { AtomicU64::new(0) }; BUCKETS];

fn bucket_index(value: u64) -> usize {
    let bits = 64 - value.leading_zeros();
    if bits <= SUB_BUCKET_BITS + 1 {
        return value as usize;
    }
    let shift = bits - SUB_BUCKET_BITS - 1;
    shift as usize * SUB_BUCKETS + (value >> shift) as usize
}

/// The largest value in bucket `index` (what a percentile reports, as HDR does).
pub fn bucket_top(index: usize) -> u64 {
    if index < 2 * SUB_BUCKETS {
        return index as u64;
    }
    let shift = index / SUB_BUCKETS - 1;
    let mantissa = (index % SUB_BUCKETS + SUB_BUCKETS) as u64;
    (mantissa << shift) | ((1u64 << shift) - 1)
}

/// One transfer of `bytes` that took `latency_ns`.
pub fn add(bytes: u64, latency_ns: u64) {
    BYTES.fetch_add(bytes, Ordering::Relaxed);
    OPS.fetch_add(1, Ordering::Relaxed);
    LATENCY[bucket_index(latency_ns)].fetch_add(1, Ordering::Relaxed);
}

/// Bytes and operations so far, and the operations per latency bucket.
pub fn snapshot() -> (u64, u64, Vec<u64>) {
    let latency = LATENCY.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    (BYTES.load(Ordering::Relaxed), OPS.load(Ordering::Relaxed), latency)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_a_bucket_whose_top_is_close_above_it() {
        for value in (0..20_000u64).chain([1 << 40, u64::MAX / 3, u64::MAX]) {
            let top = bucket_top(bucket_index(value));
            assert!(top >= value, "{value} -> {top}");
            assert!(top - value <= value / 16, "{value} -> {top}");
        }
        assert_eq!(bucket_index(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_top(BUCKETS - 1), u64::MAX);
    }

    #[test]
    fn adds_are_counted() {
        let (bytes, ops, latency) = snapshot();
        add(4096, 1000);
        let (bytes2, ops2, latency2) = snapshot();
        assert!(bytes2 >= bytes + 4096 && ops2 > ops);
        assert!(latency2[bucket_index(1000)] > latency[bucket_index(1000)]);
    }
}
