//! null://: no storage behind it (fio's null engine). Writes are discarded and reads answered
//! with the payload the plan expects (the executor writes it where the read lands, see
//! `Target::generates_reads`), so `--verify` passes and the figures are the engine's own cost:
//! its ceiling, and a test double for everything above it. `null://?delay=2ms` makes every
//! request (open, each transfer, fsync, close) take at least that long, as a store's round
//! trip would; `rate=60MiB` caps each request's body as a store caps a connection, and
//! `link=1Gbit` the bodies of all the rank's requests together, as a link would (a stand-in
//! for a store far away, for `hpcio tune` and its tests; the proxy conditions are the real one).
//!
//! Its capabilities are an object store's: there is no file system behind it, so nothing a
//! directory has (a path, a lock file, free space, a page cache, O_DIRECT) applies, and N-1
//! writes are a shared upload that keeps nothing. Unlike a store it has no part-size or
//! part-count limits (it keeps no parts), and it takes range writes too.

use super::{Caps, Handle, Limits, Mode, Receipt, Target, WriteHint};
use crate::first_byte::Answered;
use crate::requests::{Counters, Kind};
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct NullTarget {
    delay: Duration,
    /// Bytes per second one request's body flows at (a store's per-connection cap).
    rate: Option<f64>,
    /// Bytes per second all of this target's requests share (the rank's link).
    link: Option<Link>,
    counters: Counters,
}

/// A link the requests take turns on: each body reserves its time after the bodies before it.
#[derive(Debug)]
struct Link {
    bytes_per_s: f64,
    free_at: Mutex<Instant>,
}

impl NullTarget {
    /// `rest`: what follows `null://`: nothing, or `?` and `&`-separated settings: `delay=2ms`
    /// (each request's round trip; units ns, us, ms, s), `rate=100MiB` (per second, each
    /// request's body, as a store caps a connection) and `link=1Gbit` (per second, shared by
    /// the rank's requests, as a link caps them all); rates in B, KiB, MiB, GiB, KB, MB, GB,
    /// Kbit, Mbit or Gbit.
    pub fn new(rest: &str) -> Result<Self, String> {
        let mut target = Self { delay: Duration::ZERO, rate: None, link: None, counters: Counters::default() };
        let rest = rest.trim_end_matches('/').trim_start_matches('/');
        if rest.is_empty() {
            return Ok(target);
        }
        let shape = || format!("null:// takes delay, rate and link, e.g. null://?delay=20ms&rate=60MiB&link=1Gbit, got 'null://{rest}'");
        let settings = rest.strip_prefix('?').ok_or_else(shape)?;
        for setting in settings.split('&') {
            match setting.split_once('=') {
                Some(("delay", value)) => target.delay = parse_delay(value)?,
                Some(("rate", value)) => target.rate = Some(parse_rate(value)?),
                Some(("link", value)) => {
                    target.link = Some(Link { bytes_per_s: parse_rate(value)?, free_at: Mutex::new(Instant::now()) })
                }
                _ => return Err(shape()),
            }
        }
        Ok(target)
    }

    /// One request without a body: counted, and as slow as the delay asks.
    fn request(&self, kind: Kind) {
        self.counters.add(kind);
        self.wait_delay();
    }

    /// One transfer of `bytes`: a GET waits the delay for its first byte, then its body flows;
    /// a PUT's body flows first, then the delay until the answer. Its first byte is recorded.
    fn transfer(&self, kind: Kind, answered: Answered, bytes: usize) {
        self.counters.add(kind);
        let sent = Instant::now();
        if matches!(answered, Answered::Get) {
            self.wait_delay();
            self.first_byte(answered, sent);
        }
        self.flow(bytes);
        if matches!(answered, Answered::Put) {
            self.wait_delay();
            self.first_byte(answered, sent);
        }
    }

    fn wait_delay(&self) {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
    }

    fn first_byte(&self, answered: Answered, sent: Instant) {
        let waited = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.counters.first_bytes.record(answered, waited);
    }

    /// A body of `bytes` at the request's rate, after the link's earlier bodies.
    fn flow(&self, bytes: usize) {
        if self.rate.is_none() && self.link.is_none() {
            return;
        }
        let now = Instant::now();
        let mut done = self.rate.map_or(now, |rate| now + Duration::from_secs_f64(bytes as f64 / rate));
        if let Some(link) = &self.link {
            let mut free_at = link.free_at.lock().unwrap();
            let start = (*free_at).max(now);
            *free_at = start + Duration::from_secs_f64(bytes as f64 / link.bytes_per_s);
            done = done.max(*free_at);
        }
        let left = done.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            std::thread::sleep(left);
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

/// "100MiB" -> 104857600.0 bytes per second; "1Gbit" -> 125000000.0.
fn parse_rate(value: &str) -> Result<f64, String> {
    let bad = || format!("null:// rate '{value}': give a number and a unit per second (B, KiB, MiB, GiB, KB, MB, GB, Kbit, Mbit, Gbit), e.g. rate=60MiB");
    let split = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let bytes = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "Kbit" => 1e3 / 8.0,
        "Mbit" => 1e6 / 8.0,
        "Gbit" => 1e9 / 8.0,
        _ => return Err(bad()),
    };
    let rate = number * bytes;
    if rate > 0.0 && rate.is_finite() {
        Ok(rate)
    } else {
        Err(bad())
    }
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

    fn write_at(&self, _handle: &Handle, _offset: u64, data: &[u8]) -> io::Result<()> {
        self.transfer(Kind::Write, Answered::Put, data.len());
        Ok(())
    }

    fn generates_reads(&self) -> bool {
        true
    }

    fn read_at(&self, _handle: &Handle, _offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.transfer(Kind::Read, Answered::Get, buf.len());
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

    fn finish_shared(&self, _key: &str, _id: &str, _receipts: Vec<Receipt>, _part_bytes: u64) -> io::Result<()> {
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

    #[test]
    fn rates_are_read_per_second_in_bytes_or_bits() {
        let target = NullTarget::new("?delay=20ms&rate=60MiB&link=1Gbit").unwrap();
        assert_eq!(target.delay, Duration::from_millis(20));
        assert_eq!(target.rate, Some(60.0 * 1024.0 * 1024.0));
        assert_eq!(target.link.map(|l| l.bytes_per_s), Some(125e6));
        for bad in ["?rate=60", "?rate=0MiB", "?link=1Gbps", "?rate=60MiB&", "?delay=1ms&x=1"] {
            assert!(NullTarget::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_transfer_waits_at_least_the_delay_for_its_first_byte() {
        let target = NullTarget::new("?delay=5ms&rate=1GiB").unwrap();
        for _ in 0..3 {
            target.read_at(&Handle::Nothing, 0, &mut [0u8; 4096]).unwrap();
            target.write_at(&Handle::Nothing, 0, &[0u8; 4096]).unwrap();
        }
        let times = target.counters.first_bytes.snapshot();
        assert_eq!((times.get.len(), times.put.len()), (3, 3));
        // A lower bound only: sleeps end no earlier than asked, a loaded machine makes them later.
        let delay_ns = times.get.lowest_equivalent(5_000_000);
        assert!(times.get.min() >= delay_ns && times.put.min() >= delay_ns);
    }
}
