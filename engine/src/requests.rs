//! Storage requests by kind, counted by each target where it issues them: what a provider
//! bills (PUT, GET, LIST, block staging, ...), and how often the store pushed back.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Open,
    Write,
    Read,
    Fsync,
    Close,
    Put,
    Get,
    Head,
    List,
    Delete,
    CreateMultipart,
    UploadPart,
    CompleteMultipart,
    AbortMultipart,
    PutBlock,
    PutBlockList,
}

pub const NAMES: [&str; 16] = [
    "open",
    "write",
    "read",
    "fsync",
    "close",
    "put",
    "get",
    "head",
    "list",
    "delete",
    "create_multipart",
    "upload_part",
    "complete_multipart",
    "abort_multipart",
    "put_block",
    "put_block_list",
];

/// Counts are spread over this many cache lines, a thread to each in turn: every lane counts
/// every transfer, and one shared counter bounced between cores at millions of 4 KiB
/// operations per second.
const SHARDS: usize = 16;

#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard([AtomicU64; NAMES.len()]);

thread_local! {
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn my_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    SHARD.with(|shard| {
        if shard.get() == usize::MAX {
            shard.set(NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS);
        }
        shard.get()
    })
}

/// Cumulative counts for one target; executors report the difference over their phase.
#[derive(Debug, Default)]
pub struct Counters {
    shards: [Shard; SHARDS],
    /// HTTP responses 429 and 503: the store throttled us (each was retried or failed).
    pub throttled: AtomicU64,
    /// Other retryable failures: 5xx, connection errors, timeouts.
    pub retried: AtomicU64,
}

/// A point-in-time copy of `Counters`, or the difference of two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub by_kind: [u64; NAMES.len()],
    pub throttled: u64,
    pub retried: u64,
}

impl Counters {
    pub fn add(&self, kind: Kind) {
        self.shards[my_shard()].0[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut by_kind = [0u64; NAMES.len()];
        for shard in &self.shards {
            for (out, counter) in by_kind.iter_mut().zip(&shard.0) {
                *out += counter.load(Ordering::Relaxed);
            }
        }
        Snapshot {
            by_kind,
            throttled: self.throttled.load(Ordering::Relaxed),
            retried: self.retried.load(Ordering::Relaxed),
        }
    }
}

impl Snapshot {
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        let mut by_kind = [0u64; NAMES.len()];
        for (i, out) in by_kind.iter_mut().enumerate() {
            *out = self.by_kind[i] - earlier.by_kind[i];
        }
        Snapshot {
            by_kind,
            throttled: self.throttled - earlier.throttled,
            retried: self.retried - earlier.retried,
        }
    }

    /// Both together (the requests of two executors or recorders, or of two ranks).
    pub fn add(&mut self, other: &Snapshot) {
        for (mine, theirs) in self.by_kind.iter_mut().zip(other.by_kind) {
            *mine += theirs;
        }
        self.throttled += other.throttled;
        self.retried += other.retried;
    }

    /// Non-zero kinds with their names.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        NAMES.iter().zip(self.by_kind).filter(|(_, n)| *n > 0).map(|(k, n)| (*k, n))
    }
}
