//! null://: no storage behind it (fio's null engine). Writes are discarded and reads answered
//! with the payload the plan expects (the executor writes it where the read lands, see
//! `Target::generates_reads`), so `--verify` passes and the figures are the engine's own cost:
//! its ceiling, and a test double for everything above it. `null://?delay=2ms` makes every
//! request (open, each transfer, fsync, close) take at least that long, as a store's round
//! trip would.
//!
//! Its capabilities are an object store's: there is no file system behind it, so nothing a
//! directory has (a path, a lock file, free space, a page cache, O_DIRECT) applies, and N-1
//! writes are a shared upload that keeps nothing. Unlike a store it has no part-size or
//! part-count limits (it keeps no parts), and it takes range writes too.

use super::{Caps, Handle, Limits, Mode, Receipt, Target, WriteHint};
use crate::requests::{Counters, Kind};
use std::io;
use std::time::Duration;

#[derive(Debug)]
pub struct NullTarget {
    delay: Duration,
    counters: Counters,
}

impl NullTarget {
    /// `rest`: what follows `null://`, nothing or `?delay=<number><ns|us|ms|s>`.
    pub fn new(rest: &str) -> Result<Self, String> {
        let delay = match rest.trim_end_matches('/') {
            "" => Duration::ZERO,
            other => match other.trim_start_matches('/').strip_prefix("?delay=") {
                Some(value) => parse_delay(value)?,
                None => return Err(format!("null:// takes only a delay, e.g. null://?delay=2ms, got 'null://{rest}'")),
            },
        };
        Ok(Self { delay, counters: Counters::default() })
    }

    /// One request: counted, and as slow as the delay asks.
    fn request(&self, kind: Kind) {
        self.counters.add(kind);
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }
}

/// "2ms" -> 2 ms; units ns, us, ms, s.
fn parse_delay(value: &str) -> Result<Duration, String> {
    let bad = || format!("null:// delay '{value}': give a number and a unit (ns, us, ms or s), e.g. delay=2ms");
    let split = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "ns" => number * 1e-9,
        "us" => number * 1e-6,
        "ms" => number * 1e-3,
        "s" => number,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| bad())
}

impl Target for NullTarget {
    fn kind(&self) -> &'static str {
        "null"
    }

    fn caps(&self) -> Caps {
        // fsync is accepted (and does nothing); O_DIRECT has no meaning without a device.
        Caps { range_write: true, range_read: true, sync: true, direct_io: false, multipart: true }
    }

    fn limits(&self) -> Limits {
        Limits::default()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn open(&self, _key: &str, _mode: Mode, _hint: WriteHint) -> io::Result<Handle> {
        self.request(Kind::Open);
        Ok(Handle::Nothing)
    }

    fn write_at(&self, _handle: &Handle, _offset: u64, _data: &[u8]) -> io::Result<()> {
        self.request(Kind::Write);
        Ok(())
    }

    fn generates_reads(&self) -> bool {
        true
    }

    fn read_at(&self, _handle: &Handle, _offset: u64, _buf: &mut [u8]) -> io::Result<()> {
        self.request(Kind::Read);
        Ok(())
    }

    fn read_pieces(&self, _: &Handle, _: u64, _: u64, _: &mut dyn FnMut(u64, &[u8])) -> Option<io::Result<()>> {
        None // reads land in the lane's buffer, where the executor writes the payload
    }

    fn sync(&self, _handle: &Handle) -> io::Result<()> {
        self.request(Kind::Fsync);
        Ok(())
    }

    fn close(&self, _handle: Handle) -> io::Result<()> {
        self.request(Kind::Close);
        Ok(())
    }

    fn abandon(&self, _handle: Handle) {}

    fn remove(&self, _key: &str) -> io::Result<bool> {
        Ok(false) // nothing was kept
    }

    fn list(&self, _start: &str) -> io::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn probe(&self, _write: bool) -> io::Result<()> {
        Ok(())
    }

    /// Its parts are discarded like any write, so they leave no receipts to complete with.
    fn begin_shared(&self, _key: &str) -> io::Result<String> {
        self.request(Kind::CreateMultipart);
        Ok("null".to_string())
    }

    fn finish_shared(&self, _key: &str, _id: &str, _receipts: Vec<Receipt>) -> io::Result<()> {
        self.request(Kind::CompleteMultipart);
        Ok(())
    }

    fn abort_shared(&self, _key: &str, _id: &str) -> io::Result<()> {
        self.request(Kind::AbortMultipart);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delay_is_read_in_its_unit_and_anything_else_is_refused() {
        assert_eq!(NullTarget::new("").unwrap().delay, Duration::ZERO);
        assert_eq!(NullTarget::new("?delay=2ms").unwrap().delay, Duration::from_millis(2));
        assert_eq!(NullTarget::new("/?delay=1.5us").unwrap().delay, Duration::from_nanos(1500));
        assert_eq!(NullTarget::new("?delay=3s").unwrap().delay, Duration::from_secs(3));
        for bad in ["?delay=2", "?delay=ms", "?delay=-1ms", "?delay=2min", "bucket", "?speed=2ms"] {
            assert!(NullTarget::new(bad).is_err(), "{bad}");
        }
    }
}
