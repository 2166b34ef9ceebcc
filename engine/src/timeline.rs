//! Bytes completed over time, in at most `MAX_BUCKETS` equal buckets from the phase's t0.
//!
//! The bucket width doubles (pairs merge) whenever the phase outlasts the buckets, so memory
//! stays bounded and resolution is always at least duration / MAX_BUCKETS. The runner uses it
//! for the stonewall figure (bytes done when the first rank finished).

pub const MAX_BUCKETS: usize = 4096;
const FIRST_WIDTH_NS: u64 = 100_000;

#[derive(Debug, Clone)]
pub struct Timeline {
    pub width_ns: u64,
    pub buckets: Vec<u64>,
}

impl Default for Timeline {
    fn default() -> Self {
        Self { width_ns: FIRST_WIDTH_NS, buckets: Vec::new() }
    }
}

impl Timeline {
    pub fn add(&mut self, at_ns: u64, bytes: u64) {
        let mut index = (at_ns / self.width_ns) as usize;
        while index >= MAX_BUCKETS {
            self.coarsen();
            index = (at_ns / self.width_ns) as usize;
        }
        if self.buckets.len() <= index {
            self.buckets.resize(index + 1, 0);
        }
        self.buckets[index] += bytes;
    }

    fn coarsen(&mut self) {
        self.buckets = self.buckets.chunks(2).map(|pair| pair.iter().sum()).collect();
        self.width_ns *= 2;
    }

    pub fn merge(&mut self, other: &Timeline) {
        let mut other = other.clone();
        while other.width_ns < self.width_ns {
            other.coarsen();
        }
        while self.width_ns < other.width_ns {
            self.coarsen();
        }
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_keeps_every_byte() {
        let mut t = Timeline::default();
        for i in 0..10_000u64 {
            t.add(i * 50_000, 10);
        }
        assert!(t.buckets.len() <= MAX_BUCKETS);
        assert_eq!(t.buckets.iter().sum::<u64>(), 100_000);
        let mut u = Timeline::default();
        u.add(5, 1);
        u.merge(&t);
        assert_eq!(u.width_ns, t.width_ns);
        assert_eq!(u.buckets.iter().sum::<u64>(), 100_001);
    }
}
