//! The per-operation trace (--trace): every operation a rank ran, as columns, kept only when
//! asked for. A lane appends to its own `Rows` (no lock, no allocation per operation once
//! reserved); the executor folds them into its `Trace` between batches, outside any transfer.

use std::collections::HashMap;
use std::sync::Arc;

/// What a traced operation did; `NAMES[code]` is its name in a trace file.
pub const NAMES: [&str; 9] = ["", "open", "open", "write", "read", "fsync", "close", "create", "commit"];
/// The start of a shared upload (a multipart upload created, Azure's blocks staged by id).
pub const CREATE: u8 = 7;
/// The completion of a shared upload (S3's CompleteMultipartUpload, Azure's block list).
pub const COMMIT: u8 = 8;

/// Operations in columns, each file as an index into a key table kept elsewhere.
#[derive(Debug, Default, Clone)]
pub struct Rows {
    pub ops: Vec<u8>,
    pub keys: Vec<u32>,
    /// -1 where the operation has none (opens, closes).
    pub offsets: Vec<i64>,
    pub lengths: Vec<u64>,
    /// On clock_ns()'s scale.
    pub starts: Vec<u64>,
    pub ends: Vec<u64>,
}

impl Rows {
    pub fn with_capacity(n: usize) -> Self {
        Self {
            ops: Vec::with_capacity(n),
            keys: Vec::with_capacity(n),
            offsets: Vec::with_capacity(n),
            lengths: Vec::with_capacity(n),
            starts: Vec::with_capacity(n),
            ends: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub fn push(&mut self, op: u8, key: u32, offset: i64, length: u64, start: u64, end: u64) {
        self.ops.push(op);
        self.keys.push(key);
        self.offsets.push(offset);
        self.lengths.push(length);
        self.starts.push(start);
        self.ends.push(end);
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// One operation as a lane records it: one 40-byte push per transfer (one capacity check,
/// one stream of writes), made columns when the trace is taken.
#[derive(Debug, Clone, Copy)]
pub struct Traced {
    pub start: u64,
    pub end: u64,
    pub offset: i64,
    pub length: u64,
    pub key: u32,
    pub op: u8,
}

/// Operations a trace keeps unless told otherwise (per executor or recorder; the runner keeps
/// as many per rank and run): 4 Mi, 160 MiB as lanes record them. A 4 KiB random profile on
/// tmpfs makes 1.4 M operations a second, so without a bound a traced hour would need about
/// 200 GB per rank; 4 Mi transfers of 1 MiB are 4 TiB.
pub const DEFAULT_LIMIT: usize = 1 << 22;

/// A lane's operations, key indices into the plan's key table, up to its room; the rest are
/// counted, not kept.
#[derive(Debug, Default)]
pub struct LaneRows {
    pub rows: Vec<Traced>,
    room: usize,
    pub dropped: u64,
}

impl LaneRows {
    /// Reserved for `share` rows (at most `room`), so recording never allocates until a
    /// time-based run goes round again.
    pub fn new(share: usize, room: usize) -> Self {
        Self { rows: Vec::with_capacity(share.min(room)), room, dropped: 0 }
    }

    #[inline]
    pub fn push(&mut self, traced: Traced) {
        if self.rows.len() < self.room {
            self.rows.push(traced);
        } else {
            self.dropped += 1;
        }
    }
}

/// A rank's trace: its rows and the table of the files (keys) they name, up to a limit.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    pub names: Vec<String>,
    index: HashMap<String, u32>,
    pub rows: Rows,
    /// Lanes' rows with the key table they index, folded in by `take`: folding copies every
    /// row, which must not happen between a phase's last transfer and its close.
    pending: Vec<(Vec<Traced>, Arc<[String]>)>,
    /// Rows it may still keep (over every take), and those it could not since the last take.
    room: usize,
    pub dropped: u64,
}

impl Trace {
    /// A trace that keeps at most `limit` rows.
    pub fn with_limit(limit: usize) -> Self {
        Self { room: limit, ..Self::default() }
    }

    /// Rows it may still keep.
    pub fn room(&self) -> usize {
        self.room
    }

    fn intern(&mut self, key: &str) -> u32 {
        intern(&mut self.names, &mut self.index, key)
    }

    /// One operation on `key`.
    pub fn push(&mut self, op: u8, key: &str, offset: i64, length: u64, start: u64, end: u64) {
        if self.room == 0 {
            self.dropped += 1;
            return;
        }
        self.room -= 1;
        let k = self.intern(key);
        self.rows.push(op, k, offset, length, start, end);
    }

    /// A lane's rows, whose key indices are into `keys` (the plan's key table), kept as they
    /// are until `take`.
    pub fn append(&mut self, lane: LaneRows, keys: Arc<[String]>) {
        self.dropped += lane.dropped;
        self.room = self.room.saturating_sub(lane.rows.len());
        if !lane.rows.is_empty() {
            self.pending.push((lane.rows, keys));
        }
    }

    fn fold(&mut self, rows: Vec<Traced>, keys: &[String]) {
        let mut map = vec![u32::MAX; keys.len()];
        let r = &mut self.rows;
        let n = rows.len();
        r.ops.reserve(n);
        r.keys.reserve(n);
        r.offsets.reserve(n);
        r.lengths.reserve(n);
        r.starts.reserve(n);
        r.ends.reserve(n);
        for t in rows {
            let slot = &mut map[t.key as usize];
            if *slot == u32::MAX {
                *slot = intern(&mut self.names, &mut self.index, &keys[t.key as usize]);
            }
            let r = &mut self.rows;
            r.push(t.op, *slot, t.offset, t.length, t.start, t.end);
        }
    }

    /// Everything traced so far, leaving the trace empty (its key table too) with the room
    /// it has left.
    pub fn take(&mut self) -> Trace {
        let mut taken = std::mem::replace(self, Trace::with_limit(self.room));
        // Rows in the order they were recorded: control rows pushed between lanes' batches
        // come first here; readers sort by start time.
        for (rows, keys) in std::mem::take(&mut taken.pending) {
            taken.fold(rows, &keys);
        }
        taken
    }
}

fn intern(names: &mut Vec<String>, index: &mut HashMap<String, u32>, key: &str) -> u32 {
    if let Some(&i) = index.get(key) {
        return i;
    }
    let i = names.len() as u32;
    names.push(key.to_string());
    index.insert(key.to_string(), i);
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_rows_keep_their_files_through_the_key_table() {
        let mut trace = Trace::with_limit(DEFAULT_LIMIT);
        trace.push(1, "b", -1, 0, 1, 2);
        let plan_keys = vec!["a".to_string(), "b".to_string()];
        let mut lane = LaneRows::new(2, 2);
        lane.push(Traced { op: 3, key: 0, offset: 0, length: 8, start: 3, end: 4 });
        lane.push(Traced { op: 3, key: 1, offset: 8, length: 8, start: 5, end: 6 });
        trace.append(lane, Arc::from(plan_keys));
        assert_eq!(trace.rows.len(), 1, "lanes' rows wait for take()");
        let taken = trace.take();
        let files: Vec<&str> = taken.rows.keys.iter().map(|&k| taken.names[k as usize].as_str()).collect();
        assert_eq!(files, ["b", "a", "b"]);
        assert_eq!(taken.rows.offsets, [-1, 0, 8]);
        assert_eq!(NAMES[taken.rows.ops[1] as usize], "write");
        assert_eq!((trace.rows.len(), trace.names.len()), (0, 0));
    }

    #[test]
    fn rows_past_the_limit_are_counted_not_kept_across_takes() {
        let mut trace = Trace::with_limit(5);
        let row = Traced { op: 3, key: 0, offset: 0, length: 8, start: 3, end: 4 };
        let mut lane = LaneRows::new(10, 3);
        for _ in 0..4 {
            lane.push(row);
        }
        assert_eq!((lane.rows.len(), lane.dropped), (3, 1));
        trace.append(lane, Arc::from(vec!["a".to_string()]));
        trace.push(1, "a", -1, 0, 1, 2);
        let first = trace.take();
        assert_eq!((first.rows.len(), first.dropped, trace.room()), (4, 1, 1));
        trace.push(6, "a", -1, 0, 5, 6);
        trace.push(6, "a", -1, 0, 7, 8);
        let second = trace.take();
        assert_eq!((second.rows.len(), second.dropped, trace.room()), (1, 1, 0));
    }
}
