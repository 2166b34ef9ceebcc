//! The Recorder: figures for I/O that Python does itself (h5py, netCDF4, MPI-IO, zarr, a
//! training loop), from each operation's kind, start, end and bytes.
//!
//! It records through the same `Figures` methods as the executor's lanes, so a phase timed
//! here yields the spans, histogram, timeline and series a plan would.

use crate::figures::Figures;
use crate::plan::Op;
use crate::requests::Kind;
use crate::trace::Trace;

/// The operations a Python body times, each the kind of a plan's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Open,
    Write,
    Read,
    Sync,
    Close,
}

impl Recorded {
    pub fn from_name(name: &str) -> Result<Self, String> {
        Ok(match name {
            "open" => Recorded::Open,
            "write" => Recorded::Write,
            "read" => Recorded::Read,
            "sync" => Recorded::Sync,
            "close" => Recorded::Close,
            other => return Err(format!("unknown operation '{other}': open, write, read, sync or close")),
        })
    }

    /// From a plan's op code (both opens are an open).
    pub fn from_code(code: u8) -> Result<Self, String> {
        Ok(match Op::from_code(code)? {
            Op::OpenWrite | Op::OpenRead => Recorded::Open,
            Op::Write => Recorded::Write,
            Op::Read => Recorded::Read,
            Op::Sync => Recorded::Sync,
            Op::Close => Recorded::Close,
        })
    }

    /// Its code in a trace (a plan's op code: both opens are an open for reading there).
    fn code(self) -> u8 {
        match self {
            Recorded::Open => Op::OpenRead.code(),
            Recorded::Write => Op::Write.code(),
            Recorded::Read => Op::Read.code(),
            Recorded::Sync => Op::Sync.code(),
            Recorded::Close => Op::Close.code(),
        }
    }

    /// The request a POSIX target counts for the same call, so `requests` match a plan's.
    fn kind(self) -> Kind {
        match self {
            Recorded::Open => Kind::Open,
            Recorded::Write => Kind::Write,
            Recorded::Read => Kind::Read,
            Recorded::Sync => Kind::Fsync,
            Recorded::Close => Kind::Close,
        }
    }
}

#[derive(Debug, Default)]
pub struct Recorder {
    t0_ns: u64,
    pub figures: Figures,
    /// Every operation with its file and offset, when tracing (--trace).
    pub trace: Option<Trace>,
}

impl Recorder {
    /// Times recorded from now on are taken relative to `t0_ns` (clock_ns() after the barrier).
    pub fn start(&mut self, t0_ns: u64) {
        self.t0_ns = t0_ns;
    }

    /// One operation from `start_ns` to `end_ns` on clock_ns's scale, moving `bytes`.
    pub fn record(&mut self, op: Recorded, start_ns: u64, end_ns: u64, bytes: u64) -> Result<(), String> {
        if end_ns < start_ns {
            return Err(format!("an operation cannot end ({end_ns}) before it starts ({start_ns})"));
        }
        let (start, end) = (start_ns.saturating_sub(self.t0_ns), end_ns.saturating_sub(self.t0_ns));
        match op {
            Recorded::Open => self.figures.opened(start, end),
            Recorded::Write | Recorded::Read => self.figures.transferred(start, end, end_ns - start_ns, bytes),
            Recorded::Sync | Recorded::Close => self.figures.closed(start, end),
        }
        self.figures.requested(op.kind());
        Ok(())
    }

    /// `record`, and when tracing the operation's `file` and `offset` (None: it has none).
    pub fn record_at(
        &mut self,
        op: Recorded,
        start_ns: u64,
        end_ns: u64,
        bytes: u64,
        file: &str,
        offset: Option<u64>,
    ) -> Result<(), String> {
        self.record(op, start_ns, end_ns, bytes)?;
        if let Some(trace) = self.trace.as_mut() {
            let moved = if matches!(op, Recorded::Write | Recorded::Read) { bytes } else { 0 };
            trace.push(op.code(), file, offset.map_or(-1, |o| o as i64), moved, start_ns, end_ns);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_lands_where_a_plan_puts_it() {
        let mut r = Recorder::default();
        r.start(1_000);
        r.record(Recorded::Open, 1_000, 1_100, 0).unwrap();
        r.record(Recorded::Write, 1_100, 1_600, 4096).unwrap();
        r.record(Recorded::Write, 1_600, 1_900, 4096).unwrap();
        r.record(Recorded::Sync, 1_900, 2_500, 0).unwrap();
        r.record(Recorded::Close, 2_500, 2_600, 0).unwrap();
        let f = &r.figures;
        assert_eq!((f.open.pair(), f.transfer.pair(), f.close.pair()), (Some((0, 100)), Some((100, 900)), Some((900, 1_600))));
        assert_eq!((f.bytes, f.ops, f.latency.len()), (8192, 2, 2));
        assert_eq!((f.latency.min(), f.latency.max()), (300, 500));
        assert_eq!(f.timeline.buckets.iter().sum::<u64>(), 8192);
        assert_eq!(f.requests.named().collect::<Vec<_>>(), [("open", 1), ("write", 2), ("fsync", 1), ("close", 1)]);
        assert!(r.record(Recorded::Read, 5, 4, 1).unwrap_err().contains("before it starts"));
        assert_eq!(r.figures.ops, 2);
    }

    #[test]
    fn names_and_plan_codes_agree() {
        for (name, code) in [("open", 1), ("open", 2), ("write", 3), ("read", 4), ("sync", 5), ("close", 6)] {
            assert_eq!(Recorded::from_name(name), Recorded::from_code(code));
        }
        assert!(Recorded::from_name("fsync").is_err());
        assert!(Recorded::from_code(7).is_err());
    }
}
