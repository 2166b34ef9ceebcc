//! A plan: one rank's operations for one engine call, as columns received from Python.
//!
//! A row is an open, fsync or close of a file, or a run of transfers: `count` transfers of
//! `length` bytes at `offset`, `offset + stride`, ... So a plan has rows per file, segment and
//! writer, never per transfer: 256 GiB of 4 KiB transfers is one row.

use crate::payload::splitmix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    OpenWrite,
    OpenRead,
    Write,
    Read,
    Sync,
    Close,
}

impl Op {
    pub fn from_code(code: u8) -> Result<Self, String> {
        Ok(match code {
            1 => Op::OpenWrite,
            2 => Op::OpenRead,
            3 => Op::Write,
            4 => Op::Read,
            5 => Op::Sync,
            6 => Op::Close,
            other => return Err(format!("unknown plan op code {other}")),
        })
    }

    pub fn code(self) -> u8 {
        match self {
            Op::OpenWrite => 1,
            Op::OpenRead => 2,
            Op::Write => 3,
            Op::Read => 4,
            Op::Sync => 5,
            Op::Close => 6,
        }
    }

    pub fn is_transfer(self) -> bool {
        matches!(self, Op::Write | Op::Read)
    }
}

/// One row of a plan.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub op: Op,
    pub key: u32,
    /// The first transfer's offset (a control row's is unused).
    pub offset: u64,
    pub length: u64,
    /// Transfers in the run (1 for a control row).
    pub count: u64,
    /// Bytes from one transfer's offset to the next one's.
    pub stride: u64,
    /// The rank whose data this range holds (payload identity), not necessarily the caller.
    pub writer: u32,
}

pub struct Plan {
    pub rows: Vec<Row>,
    pub keys: Vec<String>,
    /// Seed of the random order of every batch of transfers; None: in order.
    pub shuffle: Option<u64>,
}

/// The columns of a plan, as Python sends them.
pub struct Columns<'c> {
    pub ops: &'c [u8],
    pub key_index: &'c [u32],
    pub offsets: &'c [u64],
    pub lengths: &'c [u64],
    pub counts: &'c [u64],
    pub strides: &'c [u64],
    pub writers: &'c [u32],
}

impl Plan {
    /// `shuffle`: (seed, rank, phase) of a random order, the same order for the same three.
    pub fn from_columns(c: &Columns, keys: Vec<String>, shuffle: Option<(u64, u64, u64)>) -> Result<Self, String> {
        let n = c.ops.len();
        let lengths = [c.key_index.len(), c.offsets.len(), c.lengths.len(), c.counts.len(), c.strides.len(), c.writers.len()];
        if lengths.iter().any(|&l| l != n) {
            return Err("plan columns differ in length".into());
        }
        let mut rows = Vec::with_capacity(n);
        for i in 0..n {
            if c.key_index[i] as usize >= keys.len() {
                return Err(format!("plan row {i}: key index {} out of range", c.key_index[i]));
            }
            let row = Row {
                op: Op::from_code(c.ops[i])?,
                key: c.key_index[i],
                offset: c.offsets[i],
                length: c.lengths[i],
                count: c.counts[i],
                stride: c.strides[i],
                writer: c.writers[i],
            };
            let last = row.count.saturating_sub(1).checked_mul(row.stride).and_then(|o| o.checked_add(row.offset));
            if row.op.is_transfer() && last.and_then(|o| o.checked_add(row.length)).is_none() {
                return Err(format!("plan row {i}: a run of {} transfers past the largest offset", row.count));
            }
            rows.push(row);
        }
        let shuffle = shuffle.map(|(seed, rank, phase)| splitmix64(splitmix64(splitmix64(seed) ^ rank) ^ phase));
        Ok(Self { rows, keys, shuffle })
    }
}
