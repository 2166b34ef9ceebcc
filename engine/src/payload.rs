//! Deterministic payload bytes from (seed, writer rank, file, offset), checked without a copy.
//!
//! Byte `o` of a stream is `BASE[o % 4096] ^ mask(granule)[o % 8]`, where `BASE` is 4 KiB of
//! pseudo-random bytes from the seed and `mask` is a 64-bit value mixed from
//! (seed, stream, o / 4096). Every 4 KiB granule of every file differs (no dedup, no
//! compression), and filling or checking costs one XOR per 8 bytes.

const GRANULE: u64 = 4096;
const WORDS: usize = (GRANULE / 8) as usize;

fn splitmix64(mut z: u64) -> u64 {
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
    splitmix64(key_hash(key) ^ (u64::from(writer) << 32 | 0x5157))
}

pub struct Payload {
    seed: u64,
    base: [u64; WORDS],
}

/// Where a checked buffer first differs from the payload.
#[derive(Debug, Clone, Copy)]
pub struct Mismatch {
    pub offset: u64,
    pub expected: u8,
    pub found: u8,
}

impl Payload {
    pub fn new(seed: u64) -> Self {
        let mut base = [0u64; WORDS];
        let mut s = splitmix64(seed ^ 0x6870_6369_6f00);
        for w in base.iter_mut() {
            s = splitmix64(s);
            *w = s;
        }
        Self { seed, base }
    }

    fn mask(&self, stream: u64, granule: u64) -> u64 {
        splitmix64(self.seed ^ stream ^ granule.wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }

    fn byte(&self, stream: u64, offset: u64) -> u8 {
        let in_granule = (offset % GRANULE) as usize;
        let base = self.base[in_granule / 8].to_le_bytes()[in_granule % 8];
        base ^ self.mask(stream, offset / GRANULE).to_le_bytes()[in_granule % 8]
    }

    /// Fill `buf` with the bytes of `stream` starting at file offset `offset`.
    pub fn fill(&self, stream: u64, offset: u64, buf: &mut [u8]) {
        let mut pos = 0usize;
        let mut off = offset;
        while pos < buf.len() {
            let in_granule = (off % GRANULE) as usize;
            let n = ((GRANULE as usize) - in_granule).min(buf.len() - pos);
            let chunk = &mut buf[pos..pos + n];
            if in_granule % 8 == 0 && n % 8 == 0 {
                let mask = self.mask(stream, off / GRANULE);
                let base = &self.base[in_granule / 8..in_granule / 8 + n / 8];
                for (dst, b) in chunk.chunks_exact_mut(8).zip(base) {
                    dst.copy_from_slice(&(b ^ mask).to_le_bytes());
                }
            } else {
                for (i, dst) in chunk.iter_mut().enumerate() {
                    *dst = self.byte(stream, off + i as u64);
                }
            }
            pos += n;
            off += n as u64;
        }
    }

    /// Check `buf` against the bytes of `stream` at `offset`; the first difference, if any.
    pub fn check(&self, stream: u64, offset: u64, buf: &[u8]) -> Option<Mismatch> {
        let mut pos = 0usize;
        let mut off = offset;
        while pos < buf.len() {
            let in_granule = (off % GRANULE) as usize;
            let n = ((GRANULE as usize) - in_granule).min(buf.len() - pos);
            let chunk = &buf[pos..pos + n];
            let fast_ok = in_granule % 8 == 0 && n % 8 == 0 && {
                let mask = self.mask(stream, off / GRANULE);
                let base = &self.base[in_granule / 8..in_granule / 8 + n / 8];
                chunk
                    .chunks_exact(8)
                    .zip(base)
                    .all(|(got, b)| u64::from_le_bytes(got.try_into().unwrap()) == b ^ mask)
            };
            if !fast_ok {
                // A piece that starts or ends off the 8-byte grid (an HTTP body arrives in
                // pieces of any length): one mask for the granule, then byte by byte.
                let mask = self.mask(stream, off / GRANULE).to_le_bytes();
                for (i, &found) in chunk.iter().enumerate() {
                    let at = in_granule + i;
                    let expected = self.base[at / 8].to_le_bytes()[at % 8] ^ mask[at % 8];
                    if found != expected {
                        return Some(Mismatch { offset: off + i as u64, expected, found });
                    }
                }
            }
            pos += n;
            off += n as u64;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
