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
