//! Where bytes go: the Target contract and the URL scheme table.

pub mod credentials;
pub mod http;
pub mod null;
pub mod object;
pub mod posix;
pub mod uploads;

#[cfg(test)]
pub(crate) mod conformance;

use crate::requests::Counters;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Read,
}

/// What the executor knows about a file or object it opens for writing, from the plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteHint {
    /// How many writes this rank will make to it (1: an object goes up in one PUT).
    pub writes: u64,
    /// Length of each write but perhaps the last: the part size of a multipart upload.
    pub part_bytes: u64,
}

/// What a target can do, so planners refuse what it cannot before any byte moves.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub range_write: bool,
    pub range_read: bool,
    pub sync: bool,
    pub direct_io: bool,
    pub multipart: bool,
}

/// A store's multipart limits (0: none), checked by the planner before the first byte.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub min_part_bytes: u64,
    pub max_part_bytes: u64,
    pub max_parts: u64,
    pub max_object_bytes: u64,
}

/// One part of a shared object: its global index and the store's receipt for it.
pub type Receipt = (u32, String);

/// A multipart upload or staged block list, possibly shared by several ranks.
#[derive(Debug)]
pub struct Upload {
    pub id: String,
    pub part_bytes: u64,
    pub receipts: Mutex<Vec<Receipt>>,
}

/// An open file, or an object being written or read.
#[derive(Debug)]
pub enum Handle {
    File(std::fs::File),
    /// An object written in one PUT, by a single write.
    Put { key: String },
    /// An object written in parts; `shared` when another rank completes it.
    Multipart { key: String, upload: Arc<Upload>, shared: bool },
    /// An object being read.
    Get { key: String },
    /// A null:// file or object: nothing behind it.
    Nothing,
}

pub trait Target: Send + Sync + Debug {
    fn kind(&self) -> &'static str;
    fn caps(&self) -> Caps;
    fn limits(&self) -> Limits;
    fn counters(&self) -> &Counters;
    fn open(&self, key: &str, mode: Mode, hint: WriteHint) -> io::Result<Handle>;
    /// Write all of `data` at `offset` (an object part's index is offset / part size).
    fn write_at(&self, handle: &Handle, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Write `data` at `offset`, handing the buffer itself to the target (an object store sends
    /// it as the request body without a copy). The default writes it through `write_at`.
    fn write_bytes(&self, handle: &Handle, offset: u64, data: bytes::Bytes) -> io::Result<()> {
        self.write_at(handle, offset, &data)
    }
    /// Whether payload transfers need no lane buffer: writes hand the target an owned request
    /// body (`write_bytes`, no copy) and reads come back in pieces (`read_pieces`).
    fn takes_bodies(&self) -> bool {
        false
    }
    /// How request bodies are authenticated, where the store has a choice (S3).
    fn payload_signing(&self) -> Option<&'static str> {
        None
    }
    /// Whether the target keeps no data and answers every read with the payload the plan
    /// expects (null://): the executor writes those bytes where the read lands, as part of the
    /// read, since only it knows whose data the range holds.
    fn generates_reads(&self) -> bool {
        false
    }
    /// Fill all of `buf` from `offset`; a short read is an error.
    fn read_at(&self, handle: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// `len` bytes from `offset`, handed to `sink` in order, piece by piece as they arrive
    /// (the offset of each piece, its bytes): an HTTP response body is checked where it lands,
    /// with no copy into one buffer. None for targets that read into caller buffers.
    fn read_pieces(&self, handle: &Handle, offset: u64, len: u64, sink: &mut dyn FnMut(u64, &[u8])) -> Option<io::Result<()>>;
    fn sync(&self, handle: &Handle) -> io::Result<()>;
    /// Close a file, or complete an upload this rank owns.
    fn close(&self, handle: Handle) -> io::Result<()>;
    /// Give up a handle after a failure: an upload this rank owns is aborted, not completed.
    fn abandon(&self, handle: Handle);
    /// Remove `key`; Ok(false) when it did not exist, where the store can tell (a DELETE of a
    /// missing object succeeds on S3 and memory:// like any other).
    fn remove(&self, key: &str) -> io::Result<bool>;
    /// Remove every one of `keys` (object stores: many requests at once, or bulk deletes);
    /// how many existed, where the store can tell.
    fn remove_all(&self, keys: &[String]) -> io::Result<usize> {
        let mut removed = 0;
        for key in keys {
            removed += usize::from(self.remove(key)?);
        }
        Ok(removed)
    }
    /// Keys under the target's prefix that start with `start` (for `hpcio clean`).
    fn list(&self, start: &str) -> io::Result<Vec<String>>;
    /// Multipart uploads in progress directly under the target's prefix whose key starts with
    /// `start`: (key, upload id). Empty where the store cannot list them.
    fn list_uploads(&self, _start: &str) -> io::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }
    /// Prove the target is usable the way a run will use it (exists, writable, direct I/O).
    fn probe(&self, write: bool) -> io::Result<()>;
    /// Set up, before any phase is timed, what the first phase would otherwise pay for and
    /// the later ones not: an object store's `connections` pooled connections (TCP, TLS,
    /// credentials). Best effort: a failure here shows again, timed, in the phase. Returns
    /// how many requests the store answered.
    fn warm(&self, _connections: usize) -> usize {
        0
    }
    /// N-1 on object stores: start an upload that several ranks add parts to.
    fn begin_shared(&self, key: &str) -> io::Result<String>;
    /// Complete a shared upload from every rank's receipts, in part order; its parts are
    /// `part_bytes` long but the last.
    fn finish_shared(&self, key: &str, id: &str, receipts: Vec<Receipt>, part_bytes: u64) -> io::Result<()>;
    /// Abort a shared upload so no part or uncommitted block is left behind (also used for
    /// uploads a dead rank left in the journal).
    fn abort_shared(&self, key: &str, id: &str) -> io::Result<()>;
}

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub direct: bool,
    /// Requests in flight per rank: sizes the async runtime of object targets.
    pub in_flight: usize,
    /// Store configuration (object_store keys) and hpcio's retry settings.
    pub store: BTreeMap<String, String>,
    /// Where multipart uploads in progress are journaled (journal.rs); None: not journaled.
    pub journal_dir: Option<PathBuf>,
    /// The run whose uploads these are, so its launcher aborts only its own after a failure.
    pub job: String,
}

/// Scheme table: one entry per target kind.
pub fn open_target(url: &str, options: &OpenOptions) -> Result<Arc<dyn Target>, String> {
    match url.split_once("://") {
        Some(("file", path)) => Ok(Arc::new(posix::PosixTarget::new(path, options.direct)?)),
        Some(("null", rest)) => Ok(Arc::new(null::NullTarget::new(rest)?)),
        Some((scheme @ ("s3" | "az" | "gs" | "memory"), rest)) => {
            Ok(Arc::new(object::ObjectTarget::new(scheme, rest, options)?))
        }
        Some((scheme, _)) => Err(format!("unsupported target scheme '{scheme}://' in {url}")),
        None => Err(format!("target must be a URL such as file:///scratch/run1, got '{url}'")),
    }
}

pub fn not_supported(kind: &str, operation: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("{kind} targets do not support {operation}"))
}
