//! A row of reads or writes through a C I/O library (HDF5, MPI-IO, PnetCDF), each call made
//! from here, one after the other, with nothing between two calls but the clock (and, for a
//! write, the payload's stamps). A Python loop between the same calls spends 30-40 us a call
//! on a node whose cores are contended (the interpreter works on cold caches after each
//! preemption), where IOR's C loop spends a few: that was the library reads' deficit against
//! IOR under load, and the writes' (docs/benchmarks.md, issue 27).
//!
//! The library's functions arrive as addresses in the process's own copy of the library, with
//! the handles of a file open in it (workloads/apis/*.py find both); the caller keeps them
//! valid for the call. The first call that fails ends the row, with what the library said of
//! it where it says more than a code (HDF5's error stack, read at once in the row's thread).

use crate::cancel;
use crate::clock::now_ns;
use std::ffi::{c_char, c_void, CStr};
use std::os::raw::c_int;
use std::ptr::null;

/// `count` transfers of `length` bytes, the first at `offset`, each `stride` after the last.
#[derive(Debug, Clone, Copy)]
pub struct Transfers {
    pub offset: u64,
    pub stride: u64,
    pub count: u64,
    pub length: u64,
}

/// The start and end (clock::now_ns) of each call that succeeded, in order, and, if a call
/// failed or the rank was interrupted (the row stops there), what it returned (or CANCELLED)
/// and a detail (the bytes an MPI-IO read got); `words`: the library's own message for the
/// failed call, where one can only be read right after it (HDF5's error stack).
#[derive(Debug, Default)]
pub struct Row {
    pub starts: Vec<u64>,
    pub ends: Vec<u64>,
    pub failed: Option<(i64, i64)>,
    pub words: Option<String>,
}

/// H5Sselect_hyperslab(space, op, start, stride, count, block) and H5Dread or H5Dwrite
/// (dataset, memory type, memory space, file space, transfer list, buffer); hid_t is 64 bits
/// (HDF5 >= 1.10). A write's buffer is const, which the call's ABI does not tell apart.
pub type Hdf5Select = unsafe extern "C" fn(i64, c_int, *const u64, *const u64, *const u64, *const u64) -> c_int;
pub type Hdf5Move = unsafe extern "C" fn(i64, i64, i64, i64, i64, *mut c_void) -> c_int;
/// H5Ewalk2(stack, direction, callback, client data) and its callback's view of one error
/// (H5E_error2_t).
pub type Hdf5Walk = unsafe extern "C" fn(i64, c_int, Hdf5WalkVisit, *mut c_void) -> c_int;
pub type Hdf5WalkVisit = unsafe extern "C" fn(u32, *const Hdf5Error, *mut c_void) -> c_int;
#[repr(C)]
pub struct Hdf5Error {
    cls_id: i64,
    maj_num: i64,
    min_num: i64,
    line: u32,
    func_name: *const c_char,
    file_name: *const c_char,
    desc: *const c_char,
}
/// MPI_File_read_at or MPI_File_write_at (or their _all)(file, offset, buffer, count,
/// datatype, status) and MPI_Get_count, with Open MPI's handles (pointers).
pub type MpiMoveAt = unsafe extern "C" fn(*mut c_void, i64, *mut c_void, c_int, *mut c_void, *mut c_void) -> c_int;
pub type MpiGetCount = unsafe extern "C" fn(*const c_void, *mut c_void, *mut c_int) -> c_int;
/// ncmpi_get_vara_uchar or ncmpi_put_vara_uchar (or their _all)(ncid, varid, start, count,
/// buffer), MPI_Offset start and count.
pub type PnetcdfMove = unsafe extern "C" fn(c_int, c_int, *const i64, *const i64, *mut c_void) -> c_int;

/// H5S_SELECT_SET of H5S_seloper_t.
const H5S_SELECT_SET: c_int = 0;
/// H5E_DEFAULT (the calling thread's error stack) and H5E_direction_t.
const H5E_DEFAULT: i64 = 0;
const H5E_WALK_UPWARD: c_int = 0;
const H5E_WALK_DOWNWARD: c_int = 1;
/// What a row reports when MPI-IO moved fewer bytes than asked (the call itself succeeded),
/// or a transfer's numbers do not fit the library's types.
pub const SHORT: i64 = -1;
/// What a row reports when the rank was interrupted (the engine's cancel flag) before a call.
pub const CANCELLED: i64 = -2;

/// `before(offset)` runs ahead of each call, untimed: a write stamps its payload there.
fn each(transfers: Transfers, before: &mut dyn FnMut(u64), mut call: impl FnMut(u64) -> Result<(), (i64, i64)>) -> Row {
    let wanted = usize::try_from(transfers.count).unwrap_or(0);
    let mut row = Row { starts: Vec::with_capacity(wanted), ends: Vec::with_capacity(wanted), ..Row::default() };
    for n in 0..transfers.count {
        if cancel::requested() {
            row.failed = Some((CANCELLED, 0));
            break;
        }
        let at = transfers.offset + n * transfers.stride;
        before(at);
        let start = now_ns();
        if let Err(code) = call(at) {
            row.failed = Some(code);
            break;
        }
        row.ends.push(now_ns());
        row.starts.push(start);
    }
    row
}

/// HDF5: each transfer a hyperslab of the 1-D byte dataset read into (or written from)
/// `buffer`, `before(offset)` ahead of each call; a failed call's words read from HDF5's error
/// stack with `walk`, as h5py says them.
///
/// # Safety
/// The functions are HDF5's, the ids open in the same library, `buffer` valid for
/// `transfers.length` bytes and as long as the memory space says.
pub unsafe fn hdf5(
    (select, call, walk): (Hdf5Select, Hdf5Move, Hdf5Walk),
    ids: [i64; 5],
    buffer: *mut c_void,
    transfers: Transfers,
    before: &mut dyn FnMut(u64),
) -> Row {
    let [dataset, memory_type, memory_space, file_space, transfer_list] = ids;
    let count = [transfers.length];
    let mut row = each(transfers, before, |at| {
        let start = [at];
        // SAFETY: the caller's promise; start and count outlive the calls.
        let selected = unsafe { select(file_space, H5S_SELECT_SET, start.as_ptr(), null(), count.as_ptr(), null()) };
        if selected < 0 {
            return Err((i64::from(selected), 0));
        }
        // SAFETY: as above.
        let moved = unsafe { call(dataset, memory_type, memory_space, file_space, transfer_list, buffer) };
        if moved < 0 { Err((i64::from(moved), 0)) } else { Ok(()) }
    });
    if matches!(row.failed, Some((code, _)) if code != CANCELLED) {
        // SAFETY: `walk` is HDF5's; nothing has called HDF5 since the failed call (the next API
        // call would clear the stack), and a thread-safe HDF5 keeps the stack per thread.
        row.words = unsafe { hdf5_error_words(walk) };
    }
    row
}

/// h5py's message for the error on HDF5's stack: the outermost error's description,
/// capitalized, and the innermost one's in brackets ("Can't synchronously write data (file
/// write failed: ... error message = 'No space left on device' ...)").
///
/// # Safety
/// `walk` is H5Ewalk2 of the library whose call failed, called from the failing thread.
unsafe fn hdf5_error_words(walk: Hdf5Walk) -> Option<String> {
    unsafe extern "C" fn keep(_n: u32, error: *const Hdf5Error, last: *mut c_void) -> c_int {
        // SAFETY: HDF5 passes a valid error, `last` is the &mut below.
        unsafe { *last.cast::<*const c_char>() = (*error).desc };
        0
    }
    let description = |direction| {
        let mut last: *const c_char = null();
        // SAFETY: the caller's promise; `keep` writes through the pointer to `last`.
        let walked = unsafe { walk(H5E_DEFAULT, direction, keep, (&raw mut last).cast()) };
        // SAFETY: HDF5's descriptions are NUL-terminated and live while the stack does.
        (walked >= 0 && !last.is_null()).then(|| unsafe { CStr::from_ptr(last) }.to_string_lossy().into_owned())
    };
    // Walked upward the last error visited is the outermost; downward, the innermost.
    let outer = description(H5E_WALK_UPWARD)?;
    let inner = description(H5E_WALK_DOWNWARD)?;
    Some(format!("{} ({inner})", capitalized(&outer)))
}

/// Python's str.capitalize(), which h5py's messages use: the first character upper case, the
/// rest lower.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect())
}

/// MPI-IO: each transfer an MPI_File_read_at or MPI_File_write_at (or _all) of `length`
/// MPI_BYTEs, its count of bytes checked (ompio returns success with fewer bytes past the end
/// of the file), `before(offset)` ahead of each call.
///
/// # Safety
/// The functions are the MPI library's, `file`, `byte` and `status` its live handles, `buffer`
/// valid for `transfers.length` bytes.
pub unsafe fn mpiio(
    call_at: MpiMoveAt,
    get_count: MpiGetCount,
    handles: [usize; 3],
    buffer: *mut c_void,
    transfers: Transfers,
    before: &mut dyn FnMut(u64),
) -> Row {
    let [file, byte, status] = handles.map(|h| h as *mut c_void);
    let Ok(length) = c_int::try_from(transfers.length) else {
        return Row { failed: Some((SHORT, 0)), ..Row::default() };
    };
    each(transfers, before, |at| {
        let Ok(offset) = i64::try_from(at) else { return Err((SHORT, 0)) };
        // SAFETY: the caller's promise.
        let code = unsafe { call_at(file, offset, buffer, length, byte, status) };
        if code != 0 {
            return Err((i64::from(code), 0));
        }
        let mut got: c_int = 0;
        // SAFETY: status was written by the call just made.
        let code = unsafe { get_count(status, byte, &mut got) };
        if code != 0 || got != length { Err((SHORT, i64::from(got))) } else { Ok(()) }
    })
}

/// PnetCDF: each transfer an ncmpi_get_vara_uchar or ncmpi_put_vara_uchar (or _all) of the
/// 1-D byte variable, `before(offset)` ahead of each call.
///
/// # Safety
/// `call` is PnetCDF's, `ncid` and `varid` open in it, `buffer` valid for `transfers.length`
/// bytes.
pub unsafe fn pnetcdf(
    call: PnetcdfMove,
    (ncid, varid): (c_int, c_int),
    buffer: *mut c_void,
    transfers: Transfers,
    before: &mut dyn FnMut(u64),
) -> Row {
    let Ok(length) = i64::try_from(transfers.length) else {
        return Row { failed: Some((SHORT, 0)), ..Row::default() };
    };
    let count = [length];
    each(transfers, before, |at| {
        let Ok(at) = i64::try_from(at) else { return Err((SHORT, 0)) };
        let start = [at];
        // SAFETY: the caller's promise; start and count outlive the call.
        let code = unsafe { call(ncid, varid, start.as_ptr(), count.as_ptr(), buffer) };
        if code != 0 { Err((i64::from(code), 0)) } else { Ok(()) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_times_every_call_and_stops_at_the_first_failure() {
        let _serial = cancel::TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = Vec::new();
        let mut before = Vec::new();
        let row = each(Transfers { offset: 8, stride: 4, count: 5, length: 4 }, &mut |at| before.push(at), |at| {
            seen.push(at);
            if at == 16 { Err((-7, 0)) } else { Ok(()) }
        });
        assert_eq!(seen, vec![8, 12, 16]);
        assert_eq!(before, seen); // each call's preparation, the failed one's too
        assert_eq!((row.starts.len(), row.ends.len(), row.failed), (2, 2, Some((-7, 0))));
        assert!(row.starts.iter().zip(&row.ends).all(|(s, e)| s <= e));
    }

    #[test]
    fn words_are_capitalized_as_python_does() {
        assert_eq!(capitalized("can't write DATA"), "Can't write data");
        assert_eq!(capitalized(""), "");
    }

    #[test]
    fn a_row_without_failures_has_a_span_per_transfer() {
        let _serial = cancel::TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let row = each(Transfers { offset: 0, stride: 0, count: 3, length: 1 }, &mut |_| {}, |_| Ok(()));
        assert_eq!((row.starts.len(), row.failed), (3, None));
    }

    #[test]
    fn an_interrupted_row_stops_before_its_next_call() {
        let _serial = cancel::TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let row = each(Transfers { offset: 0, stride: 1, count: 4, length: 1 }, &mut |_| {}, |at| {
            if at == 1 {
                cancel::set(true);
            }
            Ok(())
        });
        cancel::set(false);
        assert_eq!((row.starts.len(), row.failed), (2, Some((CANCELLED, 0))));
    }
}
