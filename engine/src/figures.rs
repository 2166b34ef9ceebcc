//! What one rank did in one phase, as the runner aggregates it: spans, counters, the latency
//! histogram, the completion timeline and the latency series.
//!
//! Both ways a phase can do its I/O record here through the same methods: the executor's
//! lanes (an engine plan) and the Recorder (a Python body timing its own calls). So their
//! figures are alike down to the bucket, and a report cannot tell which kind ran.

use crate::first_byte::FirstByteTimes;
use crate::histogram::{new_histogram, record};
use crate::requests::{Kind, Snapshot};
use crate::series::LatencySeries;
use crate::timeline::Timeline;
use hdrhistogram::Histogram;

/// Error messages kept per rank and phase: the first few say what went wrong, the count says
/// how often.
const KEPT_ERRORS: usize = 5;

/// Earliest start and latest end (ns since t0) of one kind of operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
}

impl Span {
    pub fn add(&mut self, start: u64, end: u64) {
        self.start_ns = Some(self.start_ns.map_or(start, |s| s.min(start)));
        self.end_ns = Some(self.end_ns.map_or(end, |e| e.max(end)));
    }

    pub fn merge(&mut self, other: &Span) {
        if let Some(pair) = other.pair() {
            self.add(pair.0, pair.1);
        }
    }

    /// (start, end), or None when no operation of this kind ran.
    pub fn pair(&self) -> Option<(u64, u64)> {
        self.start_ns.zip(self.end_ns)
    }
}

/// The reads or the writes among a phase's transfers: a mixed phase (fio's rwmixread) reports
/// each side apart, as fio's read and write lines.
#[derive(Debug, Clone)]
pub struct Side {
    pub bytes: u64,
    pub ops: u64,
    pub latency: Histogram<u64>,
}

impl Default for Side {
    fn default() -> Self {
        Self { bytes: 0, ops: 0, latency: new_histogram() }
    }
}

impl Side {
    fn add(&mut self, latency_ns: u64, bytes: u64) {
        record(&mut self.latency, latency_ns);
        self.bytes += bytes;
        self.ops += 1;
    }

    fn merge(&mut self, other: &Side) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        self.latency.add(&other.latency).expect("histograms share bounds");
    }
}

#[derive(Debug, Clone)]
pub struct Figures {
    pub open: Span,
    pub transfer: Span,
    pub close: Span,
    pub bytes: u64,
    pub ops: u64,
    pub errors: u64,
    pub first_errors: Vec<String>,
    pub latency: Histogram<u64>,
    pub timeline: Timeline,
    pub latency_series: LatencySeries,
    /// Storage requests by kind, throttled and retried: the target's counters over the phase
    /// for a plan, the recorded operations for a Recorder.
    pub requests: Snapshot,
    /// Opens of files or objects (a rank's open of a shared one counts).
    pub opens: u64,
    /// Object-store requests' time to first byte: the target's over the phase for a plan,
    /// none for a Recorder.
    pub first_bytes: FirstByteTimes,
    /// The plan's transfers by side (a Recorder's stay empty).
    pub reads: Side,
    pub writes: Side,
}

impl Default for Figures {
    fn default() -> Self {
        Self {
            open: Span::default(),
            transfer: Span::default(),
            close: Span::default(),
            bytes: 0,
            ops: 0,
            errors: 0,
            first_errors: Vec::new(),
            latency: new_histogram(),
            timeline: Timeline::default(),
            latency_series: LatencySeries::default(),
            requests: Snapshot::default(),
            opens: 0,
            first_bytes: FirstByteTimes::default(),
            reads: Side::default(),
            writes: Side::default(),
        }
    }
}

impl Figures {
    /// An open (or the start of an upload) from `start` to `end`, ns since t0.
    pub fn opened(&mut self, start: u64, end: u64) {
        self.open.add(start, end);
        self.opens += 1;
    }

    /// An fsync, close, or the completion of an upload, from `start` to `end`, ns since t0.
    pub fn closed(&mut self, start: u64, end: u64) {
        self.close.add(start, end);
    }

    /// A transfer of `bytes` whose storage call ran from `start` to `end` (ns since t0) and
    /// took `latency_ns` of that (a read checked piece by piece leaves the checking out).
    pub fn transferred(&mut self, start: u64, end: u64, latency_ns: u64, bytes: u64) {
        self.transfer.add(start, end);
        record(&mut self.latency, latency_ns);
        self.bytes += bytes;
        self.ops += 1;
        self.timeline.add(end, bytes);
        self.latency_series.add(end, latency_ns);
        crate::live::add(bytes, latency_ns);
    }

    /// The side of a transfer already counted by `transferred`.
    pub fn sided(&mut self, read: bool, latency_ns: u64, bytes: u64) {
        let side = if read { &mut self.reads } else { &mut self.writes };
        side.add(latency_ns, bytes);
    }

    pub fn error(&mut self, message: String) {
        self.errors += 1;
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(message);
        }
    }

    /// One storage request of `kind` (the Recorder's; a plan's target counts its own).
    pub fn requested(&mut self, kind: Kind) {
        self.requests.by_kind[kind as usize] += 1;
    }

    /// The union of both: spans widened, counters added, histograms and series merged.
    pub fn merge(&mut self, other: Figures) {
        self.open.merge(&other.open);
        self.transfer.merge(&other.transfer);
        self.close.merge(&other.close);
        self.bytes += other.bytes;
        self.ops += other.ops;
        self.errors += other.errors;
        for message in other.first_errors {
            if self.first_errors.len() < KEPT_ERRORS {
                self.first_errors.push(message);
            }
        }
        self.latency.add(&other.latency).expect("histograms share bounds");
        self.timeline.merge(&other.timeline);
        self.latency_series.merge(other.latency_series);
        self.requests.add(&other.requests);
        self.opens += other.opens;
        self.first_bytes.merge(&other.first_bytes);
        self.reads.merge(&other.reads);
        self.writes.merge(&other.writes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_is_the_figures_of_the_union() {
        let (mut a, mut b, mut all) = (Figures::default(), Figures::default(), Figures::default());
        for i in 0..100u64 {
            let part = if i % 2 == 0 { &mut a } else { &mut b };
            part.transferred(i * 1_000, i * 1_000 + 500 + i, 500 + i, 4096);
            all.transferred(i * 1_000, i * 1_000 + 500 + i, 500 + i, 4096);
            part.sided(i % 3 == 0, 500 + i, 4096);
            all.sided(i % 3 == 0, 500 + i, 4096);
        }
        a.opened(10, 20);
        b.opened(5, 15);
        b.closed(200_000, 200_100);
        b.requested(Kind::Fsync);
        for n in 0..4 {
            a.error(format!("a{n}"));
            b.error(format!("b{n}"));
        }
        a.merge(b);
        assert_eq!((a.open.pair(), a.close.pair()), (Some((5, 20)), Some((200_000, 200_100))));
        assert_eq!(a.transfer, all.transfer);
        assert_eq!((a.bytes, a.ops, a.errors), (all.bytes, all.ops, 8));
        assert_eq!(a.first_errors, ["a0", "a1", "a2", "a3", "b0"]);
        assert_eq!(a.latency, all.latency);
        assert_eq!(a.timeline.buckets, all.timeline.buckets);
        assert_eq!(a.latency_series.triples(), all.latency_series.triples());
        assert_eq!(a.requests.by_kind[Kind::Fsync as usize], 1);
        assert_eq!(a.opens, 2);
        assert_eq!((a.reads.ops, a.writes.ops, a.reads.bytes), (34, 66, 34 * 4096));
        assert_eq!((&a.reads.latency, &a.writes.latency), (&all.reads.latency, &all.writes.latency));
    }
}
