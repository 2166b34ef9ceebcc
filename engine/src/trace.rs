//! The per-operation trace (--trace): every operation a rank ran, as columns, kept only when
//! asked for. A lane appends to its own `Rows` (no lock, no allocation per operation once
//! reserved); the executor folds them into its `Trace` between batches, outside any transfer.

use std::collections::HashMap;

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

/// A rank's trace: its rows and the table of the files (keys) they name.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    pub names: Vec<String>,
    index: HashMap<String, u32>,
    pub rows: Rows,
}

impl Trace {
    fn intern(&mut self, key: &str) -> u32 {
        if let Some(&i) = self.index.get(key) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(key.to_string());
        self.index.insert(key.to_string(), i);
        i
    }

    /// One operation on `key`.
    pub fn push(&mut self, op: u8, key: &str, offset: i64, length: u64, start: u64, end: u64) {
        let k = self.intern(key);
        self.rows.push(op, k, offset, length, start, end);
    }

    /// A lane's rows, whose key indices are into `keys` (the plan's key table).
    pub fn append(&mut self, rows: Rows, keys: &[String]) {
        let mut map = vec![u32::MAX; keys.len()];
        self.rows.ops.extend_from_slice(&rows.ops);
        self.rows.keys.reserve(rows.keys.len());
        for &k in &rows.keys {
            let slot = &mut map[k as usize];
            if *slot == u32::MAX {
                *slot = self.intern(&keys[k as usize]);
            }
            self.rows.keys.push(*slot);
        }
        self.rows.offsets.extend_from_slice(&rows.offsets);
        self.rows.lengths.extend_from_slice(&rows.lengths);
        self.rows.starts.extend_from_slice(&rows.starts);
        self.rows.ends.extend_from_slice(&rows.ends);
    }

    /// Everything traced so far, leaving the trace empty (its key table too).
    pub fn take(&mut self) -> Trace {
        std::mem::take(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_rows_keep_their_files_through_the_key_table() {
        let mut trace = Trace::default();
        trace.push(1, "b", -1, 0, 1, 2);
        let plan_keys = vec!["a".to_string(), "b".to_string()];
        let mut lane = Rows::with_capacity(2);
        lane.push(3, 0, 0, 8, 3, 4);
        lane.push(3, 1, 8, 8, 5, 6);
        trace.append(lane, &plan_keys);
        let files: Vec<&str> = trace.rows.keys.iter().map(|&k| trace.names[k as usize].as_str()).collect();
        assert_eq!(files, ["b", "a", "b"]);
        assert_eq!(trace.rows.offsets, [-1, 0, 8]);
        assert_eq!(NAMES[trace.rows.ops[1] as usize], "write");
        let taken = trace.take();
        assert_eq!((taken.rows.len(), trace.rows.len(), trace.names.len()), (3, 0, 0));
    }
}
