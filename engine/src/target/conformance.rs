//! What every Target must do, run against each kind that needs no server (posix, memory):
//! the executor and the planner rely on these and on nothing kind-specific.

use super::{open_target, Handle, Mode, OpenOptions, Target, WriteHint};
use crate::payload::{stream_id, Payload};
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

const PART: usize = 8 << 10;

/// A fresh directory under the system's temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("hpcio-engine-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        Self(path)
    }

    pub fn url(&self) -> String {
        format!("file://{}", self.0.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(url: &str) -> Arc<dyn Target> {
    open_target(url, &OpenOptions { in_flight: 2, ..OpenOptions::default() }).expect(url)
}

fn payload(key: &str, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0; len];
    Payload::new(1).fill(stream_id(0, key), offset, &mut buf);
    buf
}

/// Write `parts` parts of PART bytes of `key`'s payload, in one PUT or in parts as the hint says.
fn write(t: &dyn Target, key: &str, parts: u64) -> io::Result<()> {
    let handle = t.open(key, Mode::Write, WriteHint { writes: parts, part_bytes: PART as u64 })?;
    for i in 0..parts {
        let offset = i * PART as u64;
        t.write_at(&handle, offset, &payload(key, offset, PART))?;
    }
    t.sync(&handle)?;
    t.close(handle)
}

fn read(t: &dyn Target, key: &str, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let handle = t.open(key, Mode::Read, WriteHint::default())?;
    let mut buf = vec![0; len];
    let outcome = t.read_at(&handle, offset, &mut buf);
    t.close(handle)?;
    outcome.map(|()| buf)
}

fn written_and_read_back(t: &dyn Target) {
    for (key, parts) in [("conf-one", 1), ("conf-parts", 3)] {
        write(t, key, parts).unwrap();
        let len = parts as usize * PART;
        assert_eq!(read(t, key, 0, len).unwrap(), payload(key, 0, len), "{key}");
        // A range that starts and ends inside parts.
        assert_eq!(read(t, key, 1000, len - 3000).unwrap(), payload(key, 1000, len - 3000), "{key}");
        let check = Payload::new(1).check(stream_id(0, key), 0, &read(t, key, 0, len).unwrap());
        assert!(check.is_none(), "{key}: {check:?}");
    }
    // Where the target hands reads over in pieces, they are the same bytes.
    let handle = t.open("conf-parts", Mode::Read, WriteHint::default()).unwrap();
    let mut pieces = Vec::new();
    let outcome = t.read_pieces(&handle, 100, 2 * PART as u64, &mut |at, piece| {
        assert_eq!(at, 100 + pieces.len() as u64);
        pieces.extend_from_slice(piece);
    });
    t.close(handle).unwrap();
    if let Some(outcome) = outcome {
        outcome.unwrap();
        assert_eq!(pieces, payload("conf-parts", 100, 2 * PART));
    }
    assert!(t.counters().snapshot().named().count() > 0, "{}: requests are counted", t.kind());
}

fn listed_and_removed(t: &dyn Target) {
    write(t, "conf-gone", 1).unwrap();
    write(t, "other", 1).unwrap();
    assert!(t.list("conf-").unwrap().contains(&"conf-gone".to_string()));
    assert!(!t.list("conf-").unwrap().contains(&"other".to_string()));
    assert!(t.remove("conf-gone").unwrap());
    // Removing what is gone is no error; only a file system can tell it was gone.
    let again = t.remove("conf-gone").unwrap();
    assert!(!again || t.kind() != "posix");
    assert!(!t.list("conf-").unwrap().contains(&"conf-gone".to_string()));
    assert!(read(t, "conf-gone", 0, 1).is_err());
}

fn missing_and_short_reads_fail(t: &dyn Target) {
    let missing = read(t, "conf-never-written", 0, PART).unwrap_err();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound, "{}: {missing}", t.kind());
    write(t, "conf-short", 1).unwrap();
    let short = read(t, "conf-short", PART as u64 - 10, 20).unwrap_err();
    assert_eq!(short.kind(), io::ErrorKind::UnexpectedEof, "{}: {short}", t.kind());
}

fn limits_are_consistent(t: &dyn Target) {
    let l = t.limits();
    if l.max_part_bytes > 0 {
        assert!(l.min_part_bytes <= l.max_part_bytes);
    }
    if l.max_parts > 0 {
        assert!(t.caps().multipart, "{}: part limits without multipart", t.kind());
    }
    // Neither posix nor memory has a part limit for the planner to check.
    assert_eq!((l.min_part_bytes, l.max_part_bytes, l.max_parts, l.max_object_bytes), (0, 0, 0, 0));
}

fn writing_a_handle_not_open_for_it_fails(t: &dyn Target) {
    write(t, "conf-ro", 1).unwrap();
    let handle = t.open("conf-ro", Mode::Read, WriteHint::default()).unwrap();
    assert!(t.write_at(&handle, 0, &[1; 16]).is_err());
    t.close(handle).unwrap();
    assert!(matches!(read(t, "conf-ro", 0, PART), Ok(data) if data == payload("conf-ro", 0, PART)));
}

fn conforms(t: &dyn Target) {
    t.probe(true).unwrap();
    written_and_read_back(t);
    listed_and_removed(t);
    missing_and_short_reads_fail(t);
    limits_are_consistent(t);
    writing_a_handle_not_open_for_it_fails(t);
}

#[test]
fn posix_conforms() {
    let dir = TempDir::new("conformance");
    let t = open(&dir.url());
    assert_eq!(t.kind(), "posix");
    conforms(t.as_ref());
}

#[test]
fn memory_conforms() {
    let t = open("memory://conformance");
    assert_eq!(t.kind(), "memory");
    conforms(t.as_ref());
}

#[test]
fn a_memory_prefix_is_a_namespace() {
    let (a, b) = (open("memory://a"), open("memory://a"));
    write(a.as_ref(), "conf-mine", 1).unwrap();
    assert!(b.list("conf-").unwrap().is_empty(), "each memory:// target is its own store");
}

#[test]
fn bad_urls_and_prefixes_are_refused() {
    let refused = |url: &str| open_target(url, &OpenOptions::default()).err().unwrap_or_default();
    assert!(refused("file://relative/dir").contains("needs an absolute path"));
    assert!(refused("ftp://host/x").contains("unsupported target scheme 'ftp://'"));
    assert!(refused("/scratch/run1").contains("must be a URL"));
    let gone = TempDir::new("gone");
    let url = gone.url();
    drop(gone);
    let missing = open(&url).probe(false).unwrap_err();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    // A file where the directory should be.
    let dir = TempDir::new("notdir");
    std::fs::write(dir.0.join("f"), b"x").unwrap();
    let not_dir = open(&format!("{}/f", dir.url())).probe(false).unwrap_err();
    assert_eq!(not_dir.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn handles_are_what_each_kind_opens() {
    let dir = TempDir::new("handles");
    let posix = open(&dir.url());
    assert!(matches!(posix.open("h", Mode::Write, WriteHint::default()).unwrap(), Handle::File(_)));
    let memory = open("memory://");
    let one = WriteHint { writes: 1, part_bytes: PART as u64 };
    assert!(matches!(memory.open("h", Mode::Write, one).unwrap(), Handle::Put { .. }));
    let many = WriteHint { writes: 2, ..one };
    let upload = memory.open("h", Mode::Write, many).unwrap();
    assert!(matches!(upload, Handle::Multipart { shared: false, .. }));
    memory.abandon(upload);
}
