//! Where bytes go: the Target contract and the URL scheme table.

pub mod posix;

use std::fmt::Debug;
use std::io;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Write,
    Read,
}

/// What a target can do, so planners refuse what it cannot before any byte moves.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub range_write: bool,
    pub range_read: bool,
    pub sync: bool,
    pub direct_io: bool,
}

/// An open file (later also: an object upload in progress).
#[derive(Debug)]
pub enum Handle {
    File(std::fs::File),
}

pub trait Target: Send + Sync + Debug {
    fn kind(&self) -> &'static str;
    fn caps(&self) -> Caps;
    fn open(&self, key: &str, mode: Mode) -> io::Result<Handle>;
    /// Write all of `data` at `offset`.
    fn write_at(&self, handle: &Handle, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Fill all of `buf` from `offset`; a short read is an error.
    fn read_at(&self, handle: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    fn sync(&self, handle: &Handle) -> io::Result<()>;
    fn close(&self, handle: Handle) -> io::Result<()>;
    /// Remove `key`; Ok(false) when it did not exist.
    fn remove(&self, key: &str) -> io::Result<bool>;
    /// Prove the target is usable the way a run will use it (exists, writable, direct I/O).
    fn probe(&self, write: bool) -> io::Result<()>;
}

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub direct: bool,
}

/// Scheme table: one entry per target kind.
pub fn open_target(url: &str, options: &OpenOptions) -> Result<Arc<dyn Target>, String> {
    match url.split_once("://") {
        Some(("file", path)) => Ok(Arc::new(posix::PosixTarget::new(path, options.direct)?)),
        Some((scheme, _)) => Err(format!("unsupported target scheme '{scheme}://' in {url}")),
        None => Err(format!("target must be a URL such as file:///scratch/run1, got '{url}'")),
    }
}
