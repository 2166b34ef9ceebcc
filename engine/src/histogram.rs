//! Per-op latency histograms (HDR, 1 ns .. 60 s, 3 significant digits), mergeable across
//! workers, ranks and iterations; exchanged as HdrHistogram V2 bytes.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

pub const HIGHEST_NS: u64 = 60_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("static histogram bounds are valid")
}

pub fn record(h: &mut Histogram<u64>, latency_ns: u64) {
    h.saturating_record(latency_ns.clamp(1, HIGHEST_NS));
}

pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2Serializer::new().serialize(h, &mut out).expect("serializing into a Vec cannot fail");
    out
}

pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, String> {
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("not an HDR histogram: {e:?}"))?;
    h.auto(true);
    Ok(h)
}

pub fn merge(parts: &[&[u8]]) -> Result<Histogram<u64>, String> {
    let mut total = new_histogram();
    total.auto(true);
    for part in parts {
        total.add(decode(part)?).map_err(|e| format!("cannot merge histograms: {e:?}"))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        // 1 us, 2 us, ..., 100 ms, once each: the q-quantile is q x 100 ms, to 3 digits.
        let mut h = new_histogram();
        for us in 1..=100_000u64 {
            record(&mut h, us * 1_000);
        }
        for (q, expected_ns) in [(0.5, 50e6), (0.9, 90e6), (0.99, 99e6), (0.999, 99.9e6)] {
            let got = h.value_at_quantile(q) as f64;
            assert!((got - expected_ns).abs() <= expected_ns * 1e-3, "p{q}: {got} vs {expected_ns}");
        }
        assert!((h.mean() - 50.0005e6).abs() <= 50e6 * 1e-3);
        // A heavy tail: 99% at 1 ms and 1% at 1 s puts p99 at 1 ms and p99.9 at 1 s.
        let mut tail = new_histogram();
        for i in 0..10_000u64 {
            record(&mut tail, if i < 9_900 { 1_000_000 } else { 1_000_000_000 });
        }
        assert!((tail.value_at_quantile(0.99) as f64 - 1e6).abs() <= 1e3);
        assert!((tail.value_at_quantile(0.999) as f64 - 1e9).abs() <= 1e6);
    }

    #[test]
    fn merge_equals_histogram_of_union() {
        let (mut a, mut b, mut all) = (new_histogram(), new_histogram(), new_histogram());
        for v in 1..=1000u64 {
            let target = if v % 3 == 0 { &mut a } else { &mut b };
            record(target, v * 1000);
            record(&mut all, v * 1000);
        }
        let merged = merge(&[&encode(&a), &encode(&b)]).unwrap();
        assert_eq!(merged.len(), all.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), all.value_at_quantile(q));
        }
    }
}
