//! A seeded random order of [0, n) computed on demand, never stored: a permutation of 4 Ki
//! transfers or of 64 Gi costs the same few words.
//!
//! A Feistel network permutes [0, 2^bits) (the smallest power of two that holds n; its two
//! halves differ by a bit when bits is odd, and trade widths each round, as format-preserving
//! encryption's unbalanced networks do) and cycle walking keeps it inside [0, n): an index
//! that lands at or past n is permuted again until it falls inside, which stays a bijection
//! because the walk follows the network's own cycles (fio walks its LFSR the same way). Fewer
//! than half the values of the domain are outside, so a walk takes under 2 permutations on
//! average; a balanced network's domain (an even power of two) could be 4 times n, and its
//! longer walks cost random 4 KiB transfers on tmpfs 5-9 %.

use crate::payload::splitmix64;

/// Four rounds mix an I/O order well past what the tests ask of a random permutation (fixed
/// points, near neighbours), and keep random 4 KiB transfers on tmpfs as fast as a stored
/// permutation was: six cost 2-3.5 % of them (bench, 2026-11-24). Even, so the parts end at
/// the widths they started with.
const ROUNDS: usize = 4;

#[derive(Debug, Clone)]
pub struct Shuffle {
    n: u64,
    /// Widths of the high and low parts of an index (they trade places every round).
    high_bits: u32,
    low_bits: u32,
    round_keys: [u64; ROUNDS],
}

impl Shuffle {
    /// The permutation of [0, n) drawn by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let low_bits = bits / 2;
        let mut s = seed;
        let round_keys = std::array::from_fn(|_| {
            s = splitmix64(s);
            s
        });
        Self { n, high_bits: bits - low_bits, low_bits, round_keys }
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
        let (mut high_bits, mut low_bits) = (self.high_bits, self.low_bits);
        let (mut high, mut low) = (x >> low_bits, x & mask(low_bits));
        for key in self.round_keys {
            // One multiply a round, its high bits taken (multiply-shift hashing): a walk is
            // on every random transfer's path, and splitmix64 a round cost 3-5% of a 4 KiB
            // transfer on tmpfs. The high part takes the hash of the low one, then they swap.
            let f = (low ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) >> (64 - high_bits);
            (high, low) = (low, high ^ f);
            (high_bits, low_bits) = (low_bits, high_bits);
        }
        (high << low_bits) | low
    }
}

/// The low `bits` bits set.
#[inline]
fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
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
