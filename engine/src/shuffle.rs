//! A seeded random order of [0, n) computed on demand, never stored: a permutation of 4 Ki
//! transfers or of 64 Gi costs the same few words.
//!
//! A balanced Feistel network permutes [0, 2^bits) (the smallest even power of two that holds
//! n) and cycle walking keeps it inside [0, n): an index that lands at or past n is permuted
//! again until it falls inside, which stays a bijection because the walk follows the
//! network's own cycles (as format-preserving encryption does; fio walks its LFSR the same
//! way). At most 3 of every 4 values of the domain are outside, so a walk is short.

use crate::payload::splitmix64;

const ROUNDS: usize = 6;

#[derive(Debug, Clone)]
pub struct Shuffle {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    round_keys: [u64; ROUNDS],
}

impl Shuffle {
    /// The permutation of [0, n) drawn by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let half_mask = if half_bits >= 64 { u64::MAX } else { (1u64 << half_bits) - 1 };
        let mut s = seed;
        let round_keys = std::array::from_fn(|_| {
            s = splitmix64(s);
            s
        });
        Self { n, half_bits, half_mask, round_keys }
    }

    /// The `i`-th index of the order (i < n).
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.permute(i);
        while x >= self.n {
            x = self.permute(x);
        }
        x
    }

    #[inline]
    fn permute(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half_bits, x & self.half_mask);
        for key in self.round_keys {
            // One multiply a round, its high bits taken (multiply-shift hashing): a walk is
            // on every random transfer's path, and splitmix64 a round cost 3-5% of a 4 KiB
            // transfer on tmpfs.
            let f = ((right ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) >> (64 - self.half_bits)) & self.half_mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(n: u64, seed: u64) -> Vec<u64> {
        let s = Shuffle::new(n, seed);
        (0..n).map(|i| s.at(i)).collect()
    }

    #[test]
    fn every_index_once_for_every_size() {
        for n in (1..300).chain([1000, 4095, 4096, 4097, 65_537]) {
            let mut seen = order(n, 7);
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    fn seeded_repeatable_and_not_the_identity() {
        assert_eq!(order(1000, 1), order(1000, 1));
        assert_ne!(order(1000, 1), order(1000, 2));
        assert_ne!(order(1000, 1), (0..1000).collect::<Vec<_>>());
        // As mixed as a random permutation: about one index in place, and about 1 in 512
        // neighbours within 64 of each other (a sequential order would have them all).
        let o = order(1 << 16, 3);
        assert!(o.iter().enumerate().filter(|(i, &x)| *i as u64 == x).count() < 16);
        let near = o.windows(2).filter(|w| w[0].abs_diff(w[1]) < 64).count();
        assert!(near < 256, "{near} neighbours within 64");
    }

    #[test]
    fn huge_domains_need_no_table() {
        let n = 1u64 << 40; // 4 TiB of 4 KiB transfers
        let s = Shuffle::new(n, 9);
        let firsts: Vec<u64> = (0..1000).map(|i| s.at(i)).collect();
        assert!(firsts.iter().all(|&x| x < n));
        let mut unique = firsts.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), firsts.len());
        let s = Shuffle::new(u64::MAX, 9);
        assert!(s.at(u64::MAX - 1) < u64::MAX);
    }
}
