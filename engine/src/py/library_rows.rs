//! The Python face of library_rows: a row of reads through HDF5, MPI-IO or PnetCDF made by
//! the engine with the GIL released. Each returns (starts, ends, failed): clock_ns() spans of
//! the calls that succeeded and, for a call that failed, (what it returned, a detail).

use crate::library_rows::{self, Hdf5Read, Hdf5Select, MpiGetCount, MpiReadAt, PnetcdfGet, Row, Transfers};
use crate::error;
use numpy::{PyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use std::ffi::c_void;
use std::os::raw::c_int;

type RowResult<'py> = (Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>, Option<(i64, i64)>);

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

/// `reads` run with the GIL released on the buffer's address and the row's transfers
/// ((offset, stride, count), each as long as the buffer).
fn row<'py>(
    py: Python<'py>,
    mut buffer: PyReadwriteArray1<'py, u8>,
    (offset, stride, count): (u64, u64, u64),
    reads: impl FnOnce(*mut c_void, Transfers) -> Row + Send,
) -> PyResult<RowResult<'py>> {
    let (address, length) = buffer_of(&mut buffer)?;
    let transfers = Transfers { offset, stride, count, length };
    let row = py.detach(move || reads(address as *mut c_void, transfers));
    Ok((PyArray1::from_vec(py, row.starts), PyArray1::from_vec(py, row.ends), row.failed))
}

/// `functions`: the addresses of H5Sselect_hyperslab and H5Dread; `ids`: the dataset, memory
/// type, memory space, file space and transfer property list.
#[pyfunction]
pub fn hdf5_read_row<'py>(
    py: Python<'py>,
    functions: (usize, usize),
    ids: [i64; 5],
    buffer: PyReadwriteArray1<'py, u8>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[functions.0, functions.1])?;
    // SAFETY: the caller passes the addresses of these two HDF5 functions (apis/hdf5.py takes
    // them from the libhdf5 the process has loaded).
    let (select, read) = unsafe {
        (std::mem::transmute::<usize, Hdf5Select>(functions.0), std::mem::transmute::<usize, Hdf5Read>(functions.1))
    };
    // SAFETY: ids open in that library, the buffer borrowed for the call.
    row(py, buffer, (offset, stride, count), move |at, t| unsafe { library_rows::hdf5(select, read, ids, at, t) })
}

/// `functions`: the addresses of MPI_File_read_at (or _all) and MPI_Get_count; `handles`: the
/// file, MPI_BYTE and an MPI_Status, as Open MPI's pointers.
#[pyfunction]
pub fn mpiio_read_row<'py>(
    py: Python<'py>,
    functions: (usize, usize),
    handles: [usize; 3],
    buffer: PyReadwriteArray1<'py, u8>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[functions.0, functions.1])?;
    // SAFETY: the caller passes the addresses of these two MPI functions (apis/mpiio.py).
    let (read_at, get_count) = unsafe {
        (std::mem::transmute::<usize, MpiReadAt>(functions.0), std::mem::transmute::<usize, MpiGetCount>(functions.1))
    };
    // SAFETY: live MPI handles, the buffer borrowed for the call.
    row(py, buffer, (offset, stride, count), move |at, t| unsafe { library_rows::mpiio(read_at, get_count, handles, at, t) })
}

/// `get`: the address of ncmpi_get_vara_uchar (or _all); `ids`: the open file's ncid and the
/// variable's varid.
#[pyfunction]
pub fn pnetcdf_read_row<'py>(
    py: Python<'py>,
    get: usize,
    ids: (c_int, c_int),
    buffer: PyReadwriteArray1<'py, u8>,
    offset: u64,
    stride: u64,
    count: u64,
) -> PyResult<RowResult<'py>> {
    known(&[get])?;
    // SAFETY: the caller passes the address of this PnetCDF function (apis/pnetcdf.py).
    let get = unsafe { std::mem::transmute::<usize, PnetcdfGet>(get) };
    // SAFETY: a file open in that library, the buffer borrowed for the call.
    row(py, buffer, (offset, stride, count), move |at, t| unsafe { library_rows::pnetcdf(get, ids.0, ids.1, at, t) })
}
