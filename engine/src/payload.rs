//! Deterministic payload bytes from (seed, writer rank, file, offset), checked without a copy.
//!
//! Byte `o` of a stream is `POOL[o % 1 MiB]`, where `POOL` is 1 MiB of pseudo-random bytes
//! from the seed, except the first 8 bytes of every 4 KiB granule: a stamp mixed from
//! (seed, stream, o / 4096). So every 4 KiB block of every file differs (no dedup), no block
//! compresses (1 MiB of random bytes between repeats, as large as a ZFS record), and a
//! buffer that already holds the payload of the same pool position (1 MiB transfers at
//! 1 MiB offsets, in any file) is refilled by rewriting its stamps alone: one word per
//! 4 KiB instead of every byte, as fio re-stamps its buffers rather than regenerate them.
//! A torn or misplaced write is caught by the pool bytes, a block of another writer or file
//! by its stamp.

use std::sync::{Arc, Mutex, PoisonError};

const GRANULE: u64 = 4096;
const STAMP: u64 = 8;
const POOL_BYTES: u64 = 1 << 20;

pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a: a stable 64-bit identity for a file or object name.
pub fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The identity of one writer's data in one file.
pub fn stream_id(writer: u32, key: &str) -> u64 {
    stream_of(writer, key_hash(key))
}

/// `stream_id` from the key's hash, computed once per file rather than once per transfer.
pub fn stream_of(writer: u32, key_hash: u64) -> u64 {
    splitmix64(key_hash ^ (u64::from(writer) << 32 | 0x5157))
}

pub struct Payload {
    seed: u64,
    pool: Box<[u8]>,
}

/// Where a checked buffer first differs from the payload.
#[derive(Debug, Clone, Copy)]
pub struct Mismatch {
    pub offset: u64,
    pub expected: u8,
    pub found: u8,
}

/// What a reused buffer holds of the payload: the pool position of its first byte and its
/// length, when its pool bytes are intact (anything else written into it forgets this).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held(Option<(u64, usize)>);

/// One run of bytes of a stream: a granule's stamp (or part of it) or a stretch of the pool.
enum Piece {
    /// Bytes `from..from + len` of the stamp of `granule`.
    Stamp { granule: u64, from: usize },
    /// Pool bytes from `at`.
    Pool { at: usize },
}

/// The pieces of `len` bytes from `offset`: (position in the buffer, length, piece).
fn pieces(offset: u64, len: usize) -> impl Iterator<Item = (usize, usize, Piece)> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        if pos >= len {
            return None;
        }
        let off = offset + pos as u64;
        let in_granule = off % GRANULE;
        let (n, piece) = if in_granule < STAMP {
            ((STAMP - in_granule) as usize, Piece::Stamp { granule: off / GRANULE, from: in_granule as usize })
        } else {
            // A granule never straddles the pool's end: GRANULE divides POOL_BYTES.
            ((GRANULE - in_granule) as usize, Piece::Pool { at: (off % POOL_BYTES) as usize })
        };
        let n = n.min(len - pos);
        let item = (pos, n, piece);
        pos += n;
        Some(item)
    })
}

/// The payload of `seed`, made once and kept for the next call with the same seed. Making it
/// is 1 MiB of splitmix (about 0.45 ms): a caller that fills or checks one transfer at a time
/// (a Python body, a collect-and-write contributor) paid that on every call, as much as the
/// 1 MiB write it was filling for.
pub fn for_seed(seed: u64) -> Arc<Payload> {
    static LAST: Mutex<Option<Arc<Payload>>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    match last.as_ref() {
        Some(payload) if payload.seed == seed => Arc::clone(payload),
        _ => {
            let payload = Arc::new(Payload::new(seed));
            *last = Some(Arc::clone(&payload));
            payload
        }
    }
}

impl Payload {
    pub fn new(seed: u64) -> Self {
        let mut s = splitmix64(seed ^ 0x6870_6369_6f00);
        let pool: Vec<u8> = (0..POOL_BYTES / 8)
            .flat_map(|_| {
                s = splitmix64(s);
                s.to_le_bytes()
            })
            .collect();
        Self { seed, pool: pool.into_boxed_slice() }
    }

    fn stamp(&self, stream: u64, granule: u64) -> [u8; STAMP as usize] {
        splitmix64(self.seed ^ stream ^ granule.wrapping_mul(0xD6E8_FEB8_6659_FD93)).to_le_bytes()
    }

    /// Fill `buf` with the bytes of `stream` starting at file offset `offset`.
    pub fn fill(&self, stream: u64, offset: u64, buf: &mut [u8]) {
        for (pos, n, piece) in pieces(offset, buf.len()) {
            let dst = &mut buf[pos..pos + n];
            match piece {
                Piece::Stamp { granule, from } => dst.copy_from_slice(&self.stamp(stream, granule)[from..from + n]),
                Piece::Pool { at } => dst.copy_from_slice(&self.pool[at..at + n]),
            }
        }
    }

    /// `fill`, for a buffer that is reused: when `held` says it already holds the pool bytes
    /// of this position and length, only the stamps are rewritten.
    pub fn refill(&self, stream: u64, offset: u64, buf: &mut [u8], held: &mut Held) {
        let here = Held(Some((offset % POOL_BYTES, buf.len())));
        if *held != here {
            self.fill(stream, offset, buf);
            *held = here;
            return;
        }
        for (pos, n, piece) in pieces(offset, buf.len()) {
            if let Piece::Stamp { granule, from } = piece {
                buf[pos..pos + n].copy_from_slice(&self.stamp(stream, granule)[from..from + n]);
            }
        }
    }

    /// Check `buf` against the bytes of `stream` at `offset`; the first difference, if any.
    pub fn check(&self, stream: u64, offset: u64, buf: &[u8]) -> Option<Mismatch> {
        for (pos, n, piece) in pieces(offset, buf.len()) {
            let stamp;
            let expected = match piece {
                Piece::Stamp { granule, from } => {
                    stamp = self.stamp(stream, granule);
                    &stamp[from..from + n]
                }
                Piece::Pool { at } => &self.pool[at..at + n],
            };
            let found = &buf[pos..pos + n];
            if found != expected {
                let i = found.iter().zip(expected).position(|(f, e)| f != e).expect("slices differ");
                return Some(Mismatch { offset: offset + (pos + i) as u64, expected: expected[i], found: found[i] });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_seed_is_the_payload_of_that_seed_when_seeds_alternate() {
        let s = stream_id(1, "k");
        for seed in [3, 3, 4, 3] {
            let (mut kept, mut fresh) = (vec![0u8; 8192], vec![0u8; 8192]);
            for_seed(seed).fill(s, 4096, &mut kept);
            Payload::new(seed).fill(s, 4096, &mut fresh);
            assert_eq!(kept, fresh, "seed {seed}");
        }
        assert!(Arc::ptr_eq(&for_seed(8), &for_seed(8)));
    }

    #[test]
    fn fill_is_position_independent() {
        let p = Payload::new(7);
        let s = stream_id(3, "f");
        let mut whole = vec![0u8; 3 * 4096 + 100];
        p.fill(s, 10, &mut whole);
        let mut part = vec![0u8; 5000];
        p.fill(s, 10 + 1234, &mut part);
        assert_eq!(&whole[1234..1234 + 5000], &part[..]);
        assert!(p.check(s, 10, &whole).is_none());
    }

    #[test]
    fn check_accepts_pieces_off_the_grid() {
        let p = Payload::new(5);
        let s = stream_id(2, "g");
        let mut whole = vec![0u8; 5 * 4096 + 13];
        p.fill(s, 3, &mut whole);
        let mut at = 0;
        for len in [1, 7, 4095, 9, 4097, 3, 8000, 100_000].iter().cycle() {
            if at >= whole.len() {
                break;
            }
            let end = (at + len).min(whole.len());
            assert!(p.check(s, 3 + at as u64, &whole[at..end]).is_none(), "piece {at}..{end}");
            at = end;
        }
        whole[4096 * 2 + 5] ^= 0x10;
        let m = p.check(s, 3 + 4096 * 2 + 1, &whole[4096 * 2 + 1..4096 * 2 + 11]).unwrap();
        assert_eq!(m.offset, 3 + 4096 * 2 + 5);
        assert_eq!(m.found, m.expected ^ 0x10);
    }

    #[test]
    fn check_names_first_flipped_byte() {
        let p = Payload::new(1);
        let s = stream_id(0, "a");
        let mut buf = vec![0u8; 8192];
        p.fill(s, 4096, &mut buf);
        buf[5000] ^= 0xff;
        buf[6000] ^= 0x01;
        let m = p.check(s, 4096, &buf).unwrap();
        assert_eq!(m.offset, 4096 + 5000);
        assert_eq!(m.found, m.expected ^ 0xff);
    }

    #[test]
    fn streams_and_granules_differ() {
        let p = Payload::new(1);
        let (mut a, mut b, mut c) = (vec![0u8; 4096], vec![0u8; 4096], vec![0u8; 4096]);
        p.fill(stream_id(0, "x"), 0, &mut a);
        p.fill(stream_id(1, "x"), 0, &mut b);
        p.fill(stream_id(0, "x"), 4096, &mut c);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert!(Payload::new(2).check(stream_id(0, "x"), 0, &a).is_some());
    }

    #[test]
    fn refill_equals_fill_whether_or_not_the_pool_bytes_are_reused() {
        let p = Payload::new(9);
        let mut buf = vec![0u8; 1 << 20];
        let mut held = Held::default();
        let mut fresh = vec![0u8; 1 << 20];
        // Same pool position (1 MiB apart, other files), then another position, then back.
        for (writer, key, offset) in [(0, "a", 0), (1, "b", 1 << 20), (0, "a", 3 << 20), (2, "c", 4096), (0, "d", 5 << 20)] {
            let s = stream_id(writer, key);
            p.refill(s, offset, &mut buf, &mut held);
            p.fill(s, offset, &mut fresh);
            assert!(buf == fresh, "{key} at {offset}");
            assert!(p.check(s, offset, &buf).is_none());
        }
        assert_eq!(held, Held(Some((0, 1 << 20))));
    }

    #[test]
    fn no_4k_block_repeats_across_files_and_pool_wraps() {
        let p = Payload::new(4);
        let mut seen = std::collections::HashSet::new();
        let mut buf = vec![0u8; 4 << 20];
        for key in ["x", "y"] {
            for writer in 0..2 {
                p.fill(stream_id(writer, key), 0, &mut buf);
                for block in buf.chunks(4096) {
                    assert!(seen.insert(block.to_vec()), "a 4 KiB block repeats");
                }
            }
        }
    }
}
