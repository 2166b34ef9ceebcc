//! A trace as the numpy columns Executor.take_trace and Recorder.take_trace return.

use crate::trace;
use numpy::PyArray1;
use pyo3::prelude::*;

/// (file names, op codes (TRACE_OPS), file index, offsets (-1: none), lengths, starts, ends,
/// operations past the limit, not kept), times on clock_ns()'s scale. The columns move to
/// numpy without a copy.
pub type TraceColumns<'py> = (
    Vec<String>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    u64,
);

pub fn trace_columns(py: Python<'_>, t: trace::Trace) -> TraceColumns<'_> {
    let r = t.rows;
    (
        t.names,
        PyArray1::from_vec(py, r.ops),
        PyArray1::from_vec(py, r.keys),
        PyArray1::from_vec(py, r.offsets),
        PyArray1::from_vec(py, r.lengths),
        PyArray1::from_vec(py, r.starts),
        PyArray1::from_vec(py, r.ends),
        t.dropped,
    )
}
