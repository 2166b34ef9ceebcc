//! POSIX files: pwrite/pread at offsets, optional O_DIRECT, fsync.

use super::{Caps, Handle, Mode, Target};
use crate::buffer::{AlignedBuf, ALIGN};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;

#[derive(Debug)]
pub struct PosixTarget {
    root: PathBuf,
    direct: bool,
}

impl PosixTarget {
    pub fn new(path: &str, direct: bool) -> Result<Self, String> {
        if !path.starts_with('/') {
            return Err(format!("file:// target needs an absolute path, got '{path}'"));
        }
        Ok(Self { root: PathBuf::from(path), direct })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    fn file(handle: &Handle) -> &File {
        match handle {
            Handle::File(f) => f,
        }
    }
}

impl Target for PosixTarget {
    fn kind(&self) -> &'static str {
        "posix"
    }

    fn caps(&self) -> Caps {
        Caps { range_write: true, range_read: true, sync: true, direct_io: true }
    }

    fn open(&self, key: &str, mode: Mode) -> io::Result<Handle> {
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
        Self::file(handle).write_all_at(data, offset)
    }

    fn read_at(&self, handle: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let file = Self::file(handle);
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

    fn sync(&self, handle: &Handle) -> io::Result<()> {
        Self::file(handle).sync_all()
    }

    fn close(&self, handle: Handle) -> io::Result<()> {
        drop(handle);
        Ok(())
    }

    fn remove(&self, key: &str) -> io::Result<bool> {
        match std::fs::remove_file(self.path(key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
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
        let handle = self.open(&key, Mode::Write);
        let result = handle.and_then(|h| {
            let mut block = AlignedBuf::new(ALIGN);
            self.write_at(&h, 0, block.as_mut_slice(ALIGN))
        });
        let _ = std::fs::remove_file(self.path(&key));
        result
    }
}
