//! POSIX files: pwrite/pread at offsets, optional O_DIRECT, fsync.

use super::{not_supported, Caps, Handle, Limits, Mode, Receipt, Target, WriteHint};
use crate::buffer::{AlignedBuf, ALIGN};
use crate::requests::{Counters, Kind};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;

#[derive(Debug)]
pub struct PosixTarget {
    root: PathBuf,
    direct: bool,
    counters: Counters,
}

impl PosixTarget {
    pub fn new(path: &str, direct: bool) -> Result<Self, String> {
        if !path.starts_with('/') {
            return Err(format!("file:// target needs an absolute path, got '{path}'"));
        }
        Ok(Self { root: PathBuf::from(path), direct, counters: Counters::default() })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    fn file(handle: &Handle) -> io::Result<&File> {
        match handle {
            Handle::File(f) => Ok(f),
            other => Err(io::Error::other(format!("not a file handle: {other:?}"))),
        }
    }
}

impl Target for PosixTarget {
    fn kind(&self) -> &'static str {
        "posix"
    }

    fn caps(&self) -> Caps {
        Caps { range_write: true, range_read: true, sync: true, direct_io: true, multipart: false }
    }

    fn limits(&self) -> Limits {
        Limits::default()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn open(&self, key: &str, mode: Mode, _hint: WriteHint) -> io::Result<Handle> {
        self.counters.add(Kind::Open);
        let mut options = OpenOptions::new();
        match mode {
            // No O_TRUNC: in N-1 every rank opens the shared file, and a late truncate would
            // erase what earlier ranks wrote. Files are removed between iterations instead.
            Mode::Write => options.write(true).create(true),
            Mode::Read => options.read(true),
        };
        if self.direct {
            options.custom_flags(libc::O_DIRECT);
        }
        options.open(self.path(key)).map(Handle::File)
    }

    fn write_at(&self, handle: &Handle, offset: u64, data: &[u8]) -> io::Result<()> {
        self.counters.add(Kind::Write);
        Self::file(handle)?.write_all_at(data, offset)
    }

    fn read_at(&self, handle: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.counters.add(Kind::Read);
        let file = Self::file(handle)?;
        let mut done = 0usize;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("short read: end of file after {done} of {} bytes", buf.len()),
                    ))
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn read_pieces(&self, _: &Handle, _: u64, _: u64, _: &mut dyn FnMut(u64, &[u8])) -> Option<io::Result<()>> {
        None // pread fills the caller's (aligned) buffer
    }

    fn sync(&self, handle: &Handle) -> io::Result<()> {
        self.counters.add(Kind::Fsync);
        Self::file(handle)?.sync_all()
    }

    fn close(&self, handle: Handle) -> io::Result<()> {
        self.counters.add(Kind::Close);
        drop(handle);
        Ok(())
    }

    fn abandon(&self, handle: Handle) {
        drop(handle);
    }

    fn remove(&self, key: &str) -> io::Result<bool> {
        match std::fs::remove_file(self.path(key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn list(&self, start: &str) -> io::Result<Vec<String>> {
        let mut keys = Vec::new();
        for entry in std::fs::read_dir(&self.root)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if name.starts_with(start) {
                keys.push(name);
            }
        }
        keys.sort();
        Ok(keys)
    }

    fn begin_shared(&self, _key: &str) -> io::Result<String> {
        Err(not_supported("posix", "shared uploads (N-1 writes go to ranges of one file)"))
    }

    fn finish_shared(&self, _key: &str, _id: &str, _receipts: Vec<Receipt>, _part_bytes: u64) -> io::Result<()> {
        Err(not_supported("posix", "shared uploads"))
    }

    fn abort_shared(&self, _key: &str, _id: &str) -> io::Result<()> {
        Err(not_supported("posix", "shared uploads"))
    }

    fn probe(&self, write: bool) -> io::Result<()> {
        let meta = std::fs::metadata(&self.root)?;
        if !meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        if !write {
            return Ok(());
        }
        let key = format!(".hpcio-probe-{}", std::process::id());
        let handle = self.open(&key, Mode::Write, WriteHint::default());
        let result = handle.and_then(|h| {
            let mut block = AlignedBuf::new(ALIGN);
            self.write_at(&h, 0, block.as_mut_slice(ALIGN))
        });
        let _ = std::fs::remove_file(self.path(&key));
        result
    }
}
