//! The Python class Recorder: figures for I/O a Python body does itself.

use super::figures::PyFigures;
use super::trace_columns::{trace_columns, TraceColumns};
use crate::{error, recorder, trace};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

/// Figures for I/O a Python body does itself (h5py, netCDF4, MPI-IO, ...): it times each call
/// with clock_ns() and records it here, and gets what a plan doing that I/O would yield.
#[pyclass(name = "Recorder", module = "hpcio._engine")]
pub struct PyRecorder {
    inner: recorder::Recorder,
}

#[pymethods]
impl PyRecorder {
    /// With `trace`, every recorded operation is kept, with its file and offset.
    #[new]
    #[pyo3(signature = (*, trace = false, trace_limit = trace::DEFAULT_LIMIT))]
    fn new(trace: bool, trace_limit: usize) -> Self {
        let mut inner = recorder::Recorder::default();
        if trace {
            inner.trace = Some(trace::Trace::with_limit(trace_limit));
        }
        Self { inner }
    }

    /// Set the phase's t0 (ns, from clock_ns() right after the barrier).
    fn start(&mut self, t0_ns: u64) {
        self.inner.start(t0_ns);
    }

    /// One operation, "open" | "write" | "read" | "sync" | "close", from `start_ns` to
    /// `end_ns` (clock_ns()), moving `nbytes` (writes and reads); `file` and `offset` (where
    /// the caller knows them) go into the trace.
    #[pyo3(signature = (op, start_ns, end_ns, nbytes = 0, file = None, offset = None))]
    fn record(
        &mut self,
        op: &str,
        start_ns: u64,
        end_ns: u64,
        nbytes: u64,
        file: Option<&str>,
        offset: Option<u64>,
    ) -> PyResult<()> {
        let op = recorder::Recorded::from_name(op).map_err(error::invalid)?;
        let file = file.unwrap_or("");
        self.inner.record_at(op, start_ns, end_ns, nbytes, file, offset).map_err(error::invalid)
    }

    /// The operations traced since the last call (Executor.take_trace's columns); None when
    /// the recorder does not trace.
    fn take_trace<'py>(&mut self, py: Python<'py>) -> Option<TraceColumns<'py>> {
        self.inner.trace.as_mut().map(|t| trace_columns(py, t.take()))
    }

    /// Many operations at once: `ops` as plan op codes (workloads' Op, uint8), the others
    /// uint64 columns of the same length. All or none are recorded.
    fn record_many(
        &mut self,
        ops: PyReadonlyArray1<u8>,
        starts: PyReadonlyArray1<u64>,
        ends: PyReadonlyArray1<u64>,
        nbytes: PyReadonlyArray1<u64>,
    ) -> PyResult<()> {
        let contiguous = |e: numpy::AsSliceError| error::invalid(e.to_string());
        let (ops, starts) = (ops.as_slice().map_err(contiguous)?, starts.as_slice().map_err(contiguous)?);
        let (ends, nbytes) = (ends.as_slice().map_err(contiguous)?, nbytes.as_slice().map_err(contiguous)?);
        if [starts.len(), ends.len(), nbytes.len()].iter().any(|&n| n != ops.len()) {
            return Err(error::invalid("record_many: columns differ in length"));
        }
        let mut recorded = Vec::with_capacity(ops.len());
        for (i, &code) in ops.iter().enumerate() {
            if ends[i] < starts[i] {
                return Err(error::invalid(format!("record_many row {i}: it ends before it starts")));
            }
            recorded.push(recorder::Recorded::from_code(code).map_err(|e| error::invalid(format!("record_many row {i}: {e}")))?);
        }
        for (i, op) in recorded.into_iter().enumerate() {
            self.inner.record_at(op, starts[i], ends[i], nbytes[i], "", None).map_err(error::invalid)?;
        }
        Ok(())
    }

    /// A failed operation: counted in `errors`, the first few messages kept.
    fn error(&mut self, message: String) {
        self.inner.figures.error(message);
    }

    fn figures(&self) -> PyFigures {
        PyFigures { inner: self.inner.figures.clone() }
    }
}
