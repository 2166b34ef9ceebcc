//! The Python class Figures: what a rank did in a phase.

use crate::{figures, histogram};
use hdrhistogram::Histogram;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::BTreeMap;

/// What a rank did in a phase, from a plan (Executor.figures) or from Python's own calls
/// (Recorder.figures): the same fields either way. Times are ns since the phase's t0.
#[pyclass(name = "Figures", module = "hpcio._engine", frozen)]
pub struct PyFigures {
    pub(crate) inner: figures::Figures,
}

/// A histogram nobody recorded into is no figure: b"", so reports say nothing rather than 0.
fn encoded_unless_empty<'py>(py: Python<'py>, h: &Histogram<u64>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &if h.is_empty() { Vec::new() } else { histogram::encode(h) })
}

#[pymethods]
impl PyFigures {
    /// (earliest start, latest end) of the opens, or None when nothing was opened.
    #[getter]
    fn open_ns(&self) -> Option<(u64, u64)> {
        self.inner.open.pair()
    }

    #[getter]
    fn transfer_ns(&self) -> Option<(u64, u64)> {
        self.inner.transfer.pair()
    }

    /// Of the fsyncs, closes and upload completions.
    #[getter]
    fn close_ns(&self) -> Option<(u64, u64)> {
        self.inner.close.pair()
    }

    #[getter]
    fn bytes(&self) -> u64 {
        self.inner.bytes
    }

    #[getter]
    fn ops(&self) -> u64 {
        self.inner.ops
    }

    #[getter]
    fn errors(&self) -> u64 {
        self.inner.errors
    }

    #[getter]
    fn first_errors(&self) -> Vec<String> {
        self.inner.first_errors.clone()
    }

    /// The transfers' latencies, an HdrHistogram in V2 encoding.
    #[getter]
    fn latency_hdr<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &histogram::encode(&self.inner.latency))
    }

    /// Time to first byte of the object-store GETs, an HdrHistogram in V2 encoding; b"" where
    /// no GET went to a store.
    #[getter]
    fn ttfb_get_hdr<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        encoded_unless_empty(py, &self.inner.first_bytes.get)
    }

    /// Time to the response of the object-store PUTs, parts and blocks, likewise.
    #[getter]
    fn ttfb_put_hdr<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        encoded_unless_empty(py, &self.inner.first_bytes.put)
    }

    /// (bytes, operations, latency HdrHistogram in V2 encoding or b"") of the plan's reads.
    #[getter]
    fn read_side<'py>(&self, py: Python<'py>) -> (u64, u64, Bound<'py, PyBytes>) {
        let side = &self.inner.reads;
        (side.bytes, side.ops, encoded_unless_empty(py, &side.latency))
    }

    /// Likewise of the plan's writes.
    #[getter]
    fn write_side<'py>(&self, py: Python<'py>) -> (u64, u64, Bound<'py, PyBytes>) {
        let side = &self.inner.writes;
        (side.bytes, side.ops, encoded_unless_empty(py, &side.latency))
    }

    /// Opens of files or objects.
    #[getter]
    fn opens(&self) -> u64 {
        self.inner.opens
    }

    #[getter]
    fn timeline_width_ns(&self) -> u64 {
        self.inner.timeline.width_ns
    }

    /// Bytes completed in each bucket of `timeline_width_ns` from t0.
    #[getter]
    fn timeline_bytes(&self) -> Vec<u64> {
        self.inner.timeline.buckets.clone()
    }

    #[getter]
    fn latency_series_width_ns(&self) -> u64 {
        self.inner.latency_series.width_ns
    }

    /// (interval, latency bucket top in ns, operations), sorted.
    #[getter]
    fn latency_series(&self) -> Vec<(u64, u64, u64)> {
        self.inner.latency_series.triples()
    }

    /// Storage requests by kind (REQUEST_KINDS), those issued only.
    #[getter]
    fn requests(&self) -> BTreeMap<&'static str, u64> {
        self.inner.requests.named().collect()
    }

    #[getter]
    fn throttled(&self) -> u64 {
        self.inner.requests.throttled
    }

    #[getter]
    fn retried(&self) -> u64 {
        self.inner.requests.retried
    }

    /// Object-store requests that failed, by cause (STORE_FAILURES: a 429 or 5xx status, a
    /// timeout, a refused or dropped connection), non-zero ones only; each attempt counts.
    #[getter]
    fn store_failures(&self) -> BTreeMap<&'static str, u64> {
        self.inner.requests.failed().collect()
    }

    /// The figures of both together (a phase's plan and what its Python body recorded):
    /// spans widened, counts and requests added, histograms, timelines and series merged.
    fn merged(&self, other: &PyFigures) -> PyFigures {
        let mut inner = self.inner.clone();
        inner.merge(other.inner.clone());
        PyFigures { inner }
    }

    fn __repr__(&self) -> String {
        let f = &self.inner;
        let span = |s: &figures::Span| s.pair().map_or("None".to_string(), |(a, b)| format!("({a}, {b})"));
        format!(
            "Figures(bytes={}, ops={}, errors={}, open_ns={}, transfer_ns={}, close_ns={})",
            f.bytes,
            f.ops,
            f.errors,
            span(&f.open),
            span(&f.transfer),
            span(&f.close)
        )
    }
}
