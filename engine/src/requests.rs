//! Storage requests by kind, counted by each target where it issues them: what a provider
//! bills (PUT, GET, LIST, block staging, ...), and how often the store pushed back.

use crate::first_byte::FirstBytes;
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

/// Why a request to an object store did not succeed at once, each answer or failure counted
/// once (object_store retries them itself, up to its limits): the HTTP statuses a store sends
/// when it is saturated or failing, and the ways a request can fail without an answer.
pub const FAILURES: [&str; 10] = [
    "429",
    "500",
    "502",
    "503",
    "504",
    "other_5xx",
    "timeout",
    "connect",
    "connection_reset",
    "other_error",
];

/// The FAILURES slot of an HTTP status, if it is one counted (429 and 5xx).
pub fn failure_of_status(status: u16) -> Option<usize> {
    match status {
        429 => Some(0),
        500 => Some(1),
        502 => Some(2),
        503 => Some(3),
        504 => Some(4),
        501 | 505..=599 => Some(5),
        _ => None,
    }
}

pub const TIMEOUT: usize = 6;
pub const CONNECT: usize = 7;
pub const CONNECTION_RESET: usize = 8;
pub const OTHER_ERROR: usize = 9;

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
    /// Every failed answer or attempt by cause (FAILURES), throttling included.
    pub failures: [AtomicU64; FAILURES.len()],
    /// How long GETs and PUTs waited for their answer's first byte.
    pub first_bytes: FirstBytes,
}

/// A point-in-time copy of `Counters`, or the difference of two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub by_kind: [u64; NAMES.len()],
    pub throttled: u64,
    pub retried: u64,
    pub failures: [u64; FAILURES.len()],
}

impl Counters {
    pub fn add(&self, kind: Kind) {
        self.shards[my_shard()].0[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn failed(&self, cause: usize) {
        self.failures[cause].fetch_add(1, Ordering::Relaxed);
    }

    /// Failed answers and attempts so far, of every cause.
    pub fn failures_total(&self) -> u64 {
        self.failures.iter().map(|f| f.load(Ordering::Relaxed)).sum()
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
            failures: std::array::from_fn(|i| self.failures[i].load(Ordering::Relaxed)),
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
            failures: std::array::from_fn(|i| self.failures[i] - earlier.failures[i]),
        }
    }

    /// Both together (the requests of two executors or recorders, or of two ranks).
    pub fn add(&mut self, other: &Snapshot) {
        for (mine, theirs) in self.by_kind.iter_mut().zip(other.by_kind) {
            *mine += theirs;
        }
        self.throttled += other.throttled;
        self.retried += other.retried;
        for (mine, theirs) in self.failures.iter_mut().zip(other.failures) {
            *mine += theirs;
        }
    }

    /// Non-zero kinds with their names.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        NAMES.iter().zip(self.by_kind).filter(|(_, n)| *n > 0).map(|(k, n)| (*k, n))
    }

    /// Non-zero failure causes with their names.
    pub fn failed(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        FAILURES.iter().zip(self.failures).filter(|(_, n)| *n > 0).map(|(k, n)| (*k, n))
    }
}
