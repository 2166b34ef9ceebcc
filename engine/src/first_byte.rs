//! Time to first byte of object-store requests: from sending a request until its response's
//! headers arrive, the part of a request that distance and a busy store add before any body
//! byte flows. GETs apart from PUTs and parts (whose answer comes once the body is sent), each
//! an HDR histogram like the transfers' latencies, cumulative per target; an executor reports
//! the difference over its phase.

use crate::histogram::{new_histogram, record};
use hdrhistogram::Histogram;
use std::sync::Mutex;

/// Which request a first byte answered.
#[derive(Debug, Clone, Copy)]
pub enum Answered {
    /// A GET of an object's bytes (not a listing).
    Get,
    /// A PUT of an object, a part or a block.
    Put,
}

/// Cumulative first-byte times of one target's requests.
#[derive(Debug)]
pub struct FirstBytes {
    get: Mutex<Histogram<u64>>,
    put: Mutex<Histogram<u64>>,
}

impl Default for FirstBytes {
    fn default() -> Self {
        Self { get: Mutex::new(new_histogram()), put: Mutex::new(new_histogram()) }
    }
}

/// First-byte times of GETs and of PUTs, a copy or the difference of two.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstByteTimes {
    pub get: Histogram<u64>,
    pub put: Histogram<u64>,
}

impl Default for FirstByteTimes {
    fn default() -> Self {
        Self { get: new_histogram(), put: new_histogram() }
    }
}

impl FirstBytes {
    pub fn record(&self, answered: Answered, ns: u64) {
        let histogram = match answered {
            Answered::Get => &self.get,
            Answered::Put => &self.put,
        };
        record(&mut histogram.lock().unwrap(), ns);
    }

    pub fn snapshot(&self) -> FirstByteTimes {
        FirstByteTimes { get: self.get.lock().unwrap().clone(), put: self.put.lock().unwrap().clone() }
    }
}

impl FirstByteTimes {
    /// What was recorded after `earlier` (a snapshot of the same target).
    pub fn since(&self, earlier: &FirstByteTimes) -> FirstByteTimes {
        let mut later = self.clone();
        // `earlier` is a subset of `self` (counts only grow), so subtraction cannot fail.
        later.get.subtract(&earlier.get).expect("an earlier snapshot is a subset");
        later.put.subtract(&earlier.put).expect("an earlier snapshot is a subset");
        later
    }

    pub fn merge(&mut self, other: &FirstByteTimes) {
        self.get.add(&other.get).expect("histograms share bounds");
        self.put.add(&other.put).expect("histograms share bounds");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_sees_only_what_came_after_its_snapshot() {
        let first_bytes = FirstBytes::default();
        first_bytes.record(Answered::Get, 1_000_000);
        first_bytes.record(Answered::Put, 3_000_000);
        let start = first_bytes.snapshot();
        for _ in 0..10 {
            first_bytes.record(Answered::Get, 20_000_000);
        }
        let phase = first_bytes.snapshot().since(&start);
        assert_eq!((phase.get.len(), phase.put.len()), (10, 0));
        assert!(phase.get.min() >= phase.get.lowest_equivalent(20_000_000));
    }
}
