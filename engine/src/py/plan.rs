//! The Python class Plan: one rank's plan, checked and converted from its columns once, then
//! handed to Executor.run or run_background as one object.

use crate::{error, exec, plan};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use std::sync::Arc;

type Expanded<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
);

/// Rows of opens, fsyncs, closes and runs of transfers (workloads/plans.py Plan's columns).
/// Immutable, so a background run shares it with no copy.
#[pyclass(name = "Plan", module = "hpcio._engine", frozen)]
pub struct PyPlan {
    pub(crate) inner: Arc<plan::Plan>,
}

#[pymethods]
impl PyPlan {
    /// The columns as numpy arrays (contiguous); `shuffle`: (seed, rank, phase) of a random
    /// order of each batch of transfers. ValueError for columns that differ in length, an
    /// unknown op code, a key index out of range or a run past the largest offset.
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (ops, key_index, offsets, lengths, counts, strides, writers, keys, *, shuffle = None))]
    fn new(
        ops: PyReadonlyArray1<u8>,
        key_index: PyReadonlyArray1<u32>,
        offsets: PyReadonlyArray1<u64>,
        lengths: PyReadonlyArray1<u64>,
        counts: PyReadonlyArray1<u64>,
        strides: PyReadonlyArray1<u64>,
        writers: PyReadonlyArray1<u32>,
        keys: Vec<String>,
        shuffle: Option<(u64, u64, u64)>,
    ) -> PyResult<Self> {
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
        let inner = plan::Plan::from_columns(&columns, keys, shuffle).map_err(error::invalid)?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Rows (not transfers: a run of transfers is one row).
    fn __len__(&self) -> usize {
        self.inner.rows.len()
    }

    #[getter]
    fn keys(&self) -> Vec<String> {
        self.inner.keys.clone()
    }

    /// The plan as the engine makes it, one row per operation: every control row and every
    /// transfer of every run, in plan order (ops, key_index, offsets, lengths, writers). For
    /// tests and small plans: it is as long as the plan has transfers.
    fn operations<'py>(&self, py: Python<'py>) -> PyResult<Expanded<'py>> {
        let operations = exec::operations(&self.inner).map_err(error::invalid)?;
        Ok((
            PyArray1::from_iter(py, operations.iter().map(|x| x.op.code())),
            PyArray1::from_iter(py, operations.iter().map(|x| x.key)),
            PyArray1::from_iter(py, operations.iter().map(|x| x.offset)),
            PyArray1::from_iter(py, operations.iter().map(|x| x.length)),
            PyArray1::from_iter(py, operations.iter().map(|x| x.writer)),
        ))
    }

    fn __repr__(&self) -> String {
        format!("Plan(rows={}, keys={})", self.inner.rows.len(), self.inner.keys.len())
    }
}
