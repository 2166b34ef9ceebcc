//! Plans from Python's columns, and plan_operations (a plan expanded, for tests).

use crate::{error, exec, plan};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

type Expanded<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
);

/// The plan of Executor.run's and plan_operations' columns (numpy arrays, contiguous).
#[allow(clippy::too_many_arguments)]
pub fn plan_from<'k>(
    ops: &PyReadonlyArray1<u8>,
    key_index: &PyReadonlyArray1<u32>,
    offsets: &PyReadonlyArray1<u64>,
    lengths: &PyReadonlyArray1<u64>,
    counts: &PyReadonlyArray1<u64>,
    strides: &PyReadonlyArray1<u64>,
    writers: &PyReadonlyArray1<u32>,
    keys: &'k [String],
    shuffle: Option<(u64, u64, u64)>,
) -> PyResult<plan::Plan<'k>> {
    let contiguous = |e: numpy::AsSliceError| error::invalid(e.to_string());
    let columns = plan::Columns {
        ops: ops.as_slice().map_err(contiguous)?,
        key_index: key_index.as_slice().map_err(contiguous)?,
        offsets: offsets.as_slice().map_err(contiguous)?,
        lengths: lengths.as_slice().map_err(contiguous)?,
        counts: counts.as_slice().map_err(contiguous)?,
        strides: strides.as_slice().map_err(contiguous)?,
        writers: writers.as_slice().map_err(contiguous)?,
    };
    plan::Plan::from_columns(&columns, keys, shuffle).map_err(error::invalid)
}

/// A plan as the engine makes it, one row per operation: every control row and every
/// transfer of every run, in plan order (ops, key_index, offsets, lengths, writers). For
/// tests and small plans: it is as long as the plan has transfers.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ops, key_index, offsets, lengths, counts, strides, writers, keys, *, shuffle = None))]
pub fn plan_operations<'py>(
    py: Python<'py>,
    ops: PyReadonlyArray1<u8>,
    key_index: PyReadonlyArray1<u32>,
    offsets: PyReadonlyArray1<u64>,
    lengths: PyReadonlyArray1<u64>,
    counts: PyReadonlyArray1<u64>,
    strides: PyReadonlyArray1<u64>,
    writers: PyReadonlyArray1<u32>,
    keys: Vec<String>,
    shuffle: Option<(u64, u64, u64)>,
) -> PyResult<Expanded<'py>> {
    let plan = plan_from(&ops, &key_index, &offsets, &lengths, &counts, &strides, &writers, &keys, shuffle)?;
    let operations = exec::operations(&plan).map_err(error::invalid)?;
    Ok((
        PyArray1::from_iter(py, operations.iter().map(|x| x.op.code())),
        PyArray1::from_iter(py, operations.iter().map(|x| x.key)),
        PyArray1::from_iter(py, operations.iter().map(|x| x.offset)),
        PyArray1::from_iter(py, operations.iter().map(|x| x.length)),
        PyArray1::from_iter(py, operations.iter().map(|x| x.writer)),
    ))
}
