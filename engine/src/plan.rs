//! A plan: one rank's operations for one engine call, as columns received from Python.

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

    pub fn is_transfer(self) -> bool {
        matches!(self, Op::Write | Op::Read)
    }
}

/// One row of a plan.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub op: Op,
    pub key: u32,
    pub offset: u64,
    pub length: u64,
    /// The rank whose data this range holds (payload identity), not necessarily the caller.
    pub writer: u32,
}

pub struct Plan<'a> {
    pub rows: Vec<Row>,
    pub keys: &'a [String],
}

impl<'a> Plan<'a> {
    pub fn from_columns(
        ops: &[u8],
        key_index: &[u32],
        offsets: &[u64],
        lengths: &[u64],
        writers: &[u32],
        keys: &'a [String],
    ) -> Result<Self, String> {
        let n = ops.len();
        if [key_index.len(), offsets.len(), lengths.len(), writers.len()].iter().any(|&l| l != n) {
            return Err("plan columns differ in length".into());
        }
        let mut rows = Vec::with_capacity(n);
        for i in 0..n {
            if key_index[i] as usize >= keys.len() {
                return Err(format!("plan row {i}: key index {} out of range", key_index[i]));
            }
            rows.push(Row {
                op: Op::from_code(ops[i])?,
                key: key_index[i],
                offset: offsets[i],
                length: lengths[i],
                writer: writers[i],
            });
        }
        Ok(Self { rows, keys })
    }
}
