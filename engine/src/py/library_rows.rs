//! The Python face of library_rows: a row of reads or writes through HDF5, MPI-IO or PnetCDF
//! made by the engine with the GIL released. Each returns (starts, ends, failed): clock_ns()
//! spans of the calls that succeeded and, for a call that failed, (what it returned, a
//! detail, the library's words or None). A row of writes goes from a PayloadBuffer, stamped
//! before each call.

use super::payload_buffer::PyPayloadBuffer;
use crate::error;
use crate::library_rows::{self, Hdf5Move, Hdf5Select, Hdf5Walk, MpiGetCount, MpiMoveAt, PnetcdfMove, Row, Transfers};
use numpy::{PyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use std::ffi::c_void;
use std::os::raw::c_int;

/// A row's calls as library_rows makes them: on the buffer's address, for the transfers, each
/// after `before(offset)`.
type Calls = dyn FnOnce(*mut c_void, Transfers, &mut dyn FnMut(u64)) -> Row + Send;

type RowResult<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>, Option<(i64, i64, Option<String>)>);

/// The buffer's address and length; the caller's borrow keeps it valid.
fn buffer_of(buffer: &mut PyReadwriteArray1<u8>) -> PyResult<(usize, u64)> {
    let slice = buffer.as_slice_mut().map_err(|e| error::invalid(e.to_string()))?;
    Ok((slice.as_mut_ptr() as usize, slice.len() as u64))
}

fn known(addresses: &[usize]) -> PyResult<()> {
    if addresses.contains(&0) {
        return Err(error::invalid("a library function's address is 0"));
    }
    Ok(())
}

fn result(py: Python<'_>, row: Row) -> RowResult<'_> {
    let failed = row.failed.map(|(code, detail)| (code, detail, row.words));
    (PyArray1::from_vec(py, row.starts), PyArray1::from_vec(py, row.ends), failed)
}

/// What a row moves through: a buffer to read into (each read as long as it), or a payload
/// to write from, stamped as `writer`'s bytes of `key` before each write of `length`.
#[derive(FromPyObject)]
pub enum Through<'py> {
    Reads(PyReadwriteArray1<'py, u8>),
    Writes(PyRefMut<'py, PyPayloadBuffer>, u32, String, u64),
}

/// `calls` run with the GIL released on the row's buffer and transfers (offset, stride,
/// count).
fn row<'py>(py: Python<'py>, through: Through<'py>, (offset, stride, count): (u64, u64, u64), calls: Box<Calls>) -> PyResult<RowResult<'py>> {
    match through {
        Through::Reads(mut buffer) => {
            let (address, length) = buffer_of(&mut buffer)?;
            let transfers = Transfers { offset, stride, count, length };
            let row = py.detach(move || calls(address as *mut c_void, transfers, &mut |_| {}));
            Ok(result(py, row))
        }
        Through::Writes(mut payload, writer, key, length) => {
            let size = usize::try_from(length).map_err(|e| error::invalid(e.to_string()))?;
            let mut stamper = payload.stamper(py, writer, &key, size)?;
            let transfers = Transfers { offset, stride, count, length };
            let (row, stamper) = py.detach(move || {
                let address = stamper.address() as *mut c_void;
                // SAFETY: `payload` stays borrowed (PyRefMut) until the row has ended.
                let row = calls(address, transfers, &mut |at| unsafe { stamper.stamp(at) });
                (row, stamper)
            });
            payload.put_back(stamper);
            Ok(result(py, row))
        }
    }
}

/// `functions`: the addresses of H5Sselect_hyperslab, H5Dread (H5Dwrite for a row of writes)
/// and H5Ewalk2; `ids`: the dataset, memory type, memory space, file space and transfer
/// property list.
#[pyfunction]
pub fn hdf5_row<'py>(
    py: Python<'py>,
    functions: (usize, usize, usize),
    ids: [i64; 5],
    through: Through<'py>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[functions.0, functions.1, functions.2])?;
    // SAFETY: the caller passes the addresses of these three HDF5 functions (apis/hdf5.py takes
    // them from the libhdf5 the process has loaded).
    let functions = unsafe {
        (
            std::mem::transmute::<usize, Hdf5Select>(functions.0),
            std::mem::transmute::<usize, Hdf5Move>(functions.1),
            std::mem::transmute::<usize, Hdf5Walk>(functions.2),
        )
    };
    // SAFETY: ids open in that library, the buffer borrowed for the call.
    let calls = move |at, t, before: &mut dyn FnMut(u64)| unsafe { library_rows::hdf5(functions, ids, at, t, before) };
    row(py, through, (offset, stride, count), Box::new(calls))
}

/// `functions`: the addresses of MPI_File_read_at or MPI_File_write_at (or _all) and
/// MPI_Get_count; `handles`: the file, MPI_BYTE and an MPI_Status, as Open MPI's pointers.
#[pyfunction]
pub fn mpiio_row<'py>(
    py: Python<'py>,
    functions: (usize, usize),
    handles: [usize; 3],
    through: Through<'py>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[functions.0, functions.1])?;
    // SAFETY: the caller passes the addresses of these two MPI functions (apis/mpiio.py).
    let (call_at, get_count) = unsafe {
        (std::mem::transmute::<usize, MpiMoveAt>(functions.0), std::mem::transmute::<usize, MpiGetCount>(functions.1))
    };
    // SAFETY: live MPI handles, the buffer borrowed for the call.
    let calls =
        move |at, t, before: &mut dyn FnMut(u64)| unsafe { library_rows::mpiio(call_at, get_count, handles, at, t, before) };
    row(py, through, (offset, stride, count), Box::new(calls))
}

/// `call`: the address of ncmpi_get_vara_uchar or ncmpi_put_vara_uchar (or _all); `ids`: the
/// open file's ncid and the variable's varid.
#[pyfunction]
pub fn pnetcdf_row<'py>(
    py: Python<'py>,
    call: usize,
    ids: (c_int, c_int),
    through: Through<'py>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[call])?;
    // SAFETY: the caller passes the address of this PnetCDF function (apis/pnetcdf.py).
    let call = unsafe { std::mem::transmute::<usize, PnetcdfMove>(call) };
    // SAFETY: a file open in that library, the buffer borrowed for the call.
    let calls = move |at, t, before: &mut dyn FnMut(u64)| unsafe { library_rows::pnetcdf(call, ids, at, t, before) };
    row(py, through, (offset, stride, count), Box::new(calls))
}
