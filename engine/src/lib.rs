//! hpcio._engine: every byte of storage I/O. Registration only; logic lives in the modules.

mod batch;
mod buffer;
mod cancel;
mod clock;
mod error;
mod journal;
pub mod exec;
pub mod histogram;
mod lanes;
pub mod payload;
pub mod plan;
pub mod requests;
pub mod series;
mod shuffle;
pub mod target;
pub mod timeline;

use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::BTreeMap;
use std::sync::Arc;

#[pyfunction]
fn clock_ns() -> u64 {
    clock::now_ns()
}

/// Interrupt (True) every running and later Executor.run of this process after the transfers
/// in flight, or allow runs again (False). Its figures then cover only what was done.
#[pyfunction(name = "cancel")]
fn set_cancelled(cancelled: bool) {
    cancel::set(cancelled);
}

/// True when this module was compiled without optimisations (figures would be meaningless).
#[pyfunction]
fn debug_build() -> bool {
    cfg!(debug_assertions)
}

#[pyclass(name = "Target", module = "hpcio._engine", frozen)]
struct PyTarget {
    inner: Arc<dyn target::Target>,
    url: String,
    direct: bool,
}

#[pymethods]
impl PyTarget {
    /// `options`: object_store configuration keys (and hpcio's retry settings); `in_flight`
    /// sizes an object target's I/O runtime.
    #[new]
    #[pyo3(signature = (url, *, direct = false, in_flight = 1, options = BTreeMap::new()))]
    fn new(url: &str, direct: bool, in_flight: usize, options: BTreeMap<String, String>) -> PyResult<Self> {
        let options = target::OpenOptions { direct, in_flight, store: options };
        let inner = target::open_target(url, &options).map_err(error::invalid)?;
        Ok(Self { inner, url: url.to_string(), direct })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn probe(&self, py: Python<'_>, write: bool) -> PyResult<()> {
        py.detach(|| self.inner.probe(write)).map_err(|e| error::reason(&e))
    }

    /// Open `connections` pooled connections to an object store before any phase is timed
    /// (nothing for POSIX targets), so the first iteration pays no more set-up than the others.
    /// How many requests the store answered.
    fn warm(&self, py: Python<'_>, connections: usize) -> usize {
        py.detach(|| self.inner.warm(connections))
    }

    /// How request bodies are authenticated, where the store has a choice (S3), else None.
    fn payload_signing(&self) -> Option<&'static str> {
        self.inner.payload_signing()
    }

    /// Multipart limits in bytes and counts (0: none).
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = self.inner.limits();
        let d = PyDict::new(py);
        d.set_item("min_part_bytes", l.min_part_bytes)?;
        d.set_item("max_part_bytes", l.max_part_bytes)?;
        d.set_item("max_parts", l.max_parts)?;
        d.set_item("max_object_bytes", l.max_object_bytes)?;
        d.set_item("multipart", self.inner.caps().multipart)?;
        Ok(d)
    }

    /// Keys directly under the target's prefix that start with `start`.
    fn list(&self, py: Python<'_>, start: &str) -> PyResult<Vec<String>> {
        py.detach(|| self.inner.list(start)).map_err(|e| error::target_error("cannot list", &self.url, &e))
    }

    /// Multipart uploads in progress under the target's prefix whose key starts with `start`:
    /// (key, upload id); S3 only, empty elsewhere.
    fn list_uploads(&self, py: Python<'_>, start: &str) -> PyResult<Vec<(String, String)>> {
        py.detach(|| self.inner.list_uploads(start)).map_err(|e| error::reason(&e))
    }

    /// Abort an upload of `key` (relative to the target's prefix) that a dead run left behind.
    fn abort_upload(&self, py: Python<'_>, key: &str, id: &str) -> PyResult<()> {
        py.detach(|| self.inner.abort_shared(key, id))
            .map_err(|e| error::target_error("cannot abort an upload on", &self.url, &e))
    }

    fn remove(&self, py: Python<'_>, keys: Vec<String>) -> PyResult<usize> {
        py.detach(|| self.inner.remove_all(&keys))
        .map_err(|e: std::io::Error| error::target_error("cannot remove from", &self.url, &e))
    }
}

#[pyclass(name = "Executor", module = "hpcio._engine")]
struct PyExecutor {
    inner: exec::Executor,
}

#[pymethods]
impl PyExecutor {
    /// Buffers of `buffer_bytes` are allocated and touched here, before any clock starts.
    #[new]
    #[pyo3(signature = (target, *, seed, t0_ns = 0, in_flight = 1, verify = false, buffer_bytes = 0))]
    fn new(
        target: &PyTarget,
        seed: u64,
        t0_ns: u64,
        in_flight: usize,
        verify: bool,
        buffer_bytes: usize,
    ) -> Self {
        let mut inner =
            exec::Executor::new(target.inner.clone(), seed, t0_ns, in_flight, verify, target.direct);
        if buffer_bytes > 0 {
            inner.reserve(buffer_bytes);
        }
        Self { inner }
    }

    /// Set the phase's t0 (ns, from clock_ns() right after the barrier).
    fn start(&mut self, t0_ns: u64) {
        self.inner.start(t0_ns);
    }

    /// The next open of `key` for writing is followed by `writes` writes of `part_bytes`.
    fn expect(&mut self, key: &str, writes: u64, part_bytes: u64) {
        self.inner.expect(key, writes, part_bytes);
    }

    /// Start a shared upload (timed as an open); None if it failed (see figures()).
    fn begin_shared(&mut self, py: Python<'_>, key: &str, part_bytes: u64) -> Option<String> {
        let inner = &mut self.inner;
        py.detach(move || inner.begin_shared(key, part_bytes)).ok()
    }

    fn join_shared(&mut self, key: &str, id: &str, part_bytes: u64) {
        self.inner.join_shared(key, id, part_bytes);
    }

    /// (part index, receipt) of every part this rank put into the shared upload of `key`.
    fn take_receipts(&mut self, key: &str) -> Vec<(u32, String)> {
        self.inner.take_receipts(key)
    }

    /// Complete a shared upload (timed as a close); False if it failed (see figures()).
    fn finish_shared(&mut self, py: Python<'_>, key: &str, id: &str, receipts: Vec<(u32, String)>) -> bool {
        let inner = &mut self.inner;
        py.detach(move || inner.finish_shared(key, id, receipts)).is_ok()
    }

    /// Abort a shared upload; the error text if that failed too.
    fn abort_shared(&mut self, py: Python<'_>, key: &str, id: &str) -> Option<String> {
        let inner = &mut self.inner;
        py.detach(move || inner.abort_shared(key, id)).err()
    }

    /// `shuffle`: (seed, rank, phase) of a random order of each batch of transfers.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (ops, key_index, offsets, lengths, counts, strides, writers, keys, *, shuffle = None, source = None, sink = None, until_ns = None))]
    fn run(
        &mut self,
        py: Python<'_>,
        ops: PyReadonlyArray1<u8>,
        key_index: PyReadonlyArray1<u32>,
        offsets: PyReadonlyArray1<u64>,
        lengths: PyReadonlyArray1<u64>,
        counts: PyReadonlyArray1<u64>,
        strides: PyReadonlyArray1<u64>,
        writers: PyReadonlyArray1<u32>,
        keys: Vec<String>,
        shuffle: Option<(u64, u64, u64)>,
        source: Option<PyReadonlyArray1<u8>>,
        mut sink: Option<PyReadwriteArray1<u8>>,
        until_ns: Option<u64>,
    ) -> PyResult<()> {
        if until_ns.is_some() && (source.is_some() || sink.is_some()) {
            return Err(error::invalid("time-based runs (until_ns) move payload data only"));
        }
        let contiguous = |e: numpy::AsSliceError| error::invalid(e.to_string());
        let plan = plan_from(&ops, &key_index, &offsets, &lengths, &counts, &strides, &writers, &keys, shuffle)?;
        let data = match (&source, &mut sink) {
            (Some(_), Some(_)) => return Err(error::invalid("give a source or a sink, not both")),
            (Some(src), None) => exec::Data::Source(src.as_slice().map_err(contiguous)?),
            (None, Some(dst)) => exec::Data::Sink(dst.as_slice_mut().map_err(contiguous)?),
            (None, None) => exec::Data::Payload,
        };
        let inner = &mut self.inner;
        py.detach(move || inner.run(&plan, data, until_ns));
        Ok(())
    }

    /// The figures of everything run so far, as a dict (times in ns since t0).
    fn figures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = &self.inner.figures;
        let d = PyDict::new(py);
        for (name, span) in [("open", f.open), ("transfer", f.transfer), ("close", f.close)] {
            d.set_item(format!("{name}_start_ns"), span.start_ns)?;
            d.set_item(format!("{name}_end_ns"), span.end_ns)?;
        }
        d.set_item("bytes", f.bytes)?;
        d.set_item("ops", f.ops)?;
        d.set_item("errors", f.errors)?;
        d.set_item("first_errors", f.first_errors.clone())?;
        d.set_item("latency_hdr", PyBytes::new(py, &histogram::encode(&f.latency)))?;
        d.set_item("timeline_width_ns", f.timeline.width_ns)?;
        d.set_item("timeline_bytes", f.timeline.buckets.clone())?;
        d.set_item("latency_series_width_ns", f.latency_series.width_ns)?;
        d.set_item("latency_series", f.latency_series.triples())?;
        let delta = self.inner.requests();
        let requests = PyDict::new(py);
        for (kind, n) in delta.named() {
            requests.set_item(kind, n)?;
        }
        d.set_item("requests", requests)?;
        d.set_item("throttled", delta.throttled)?;
        d.set_item("retried", delta.retried)?;
        Ok(d)
    }
}

type Expanded<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
);

/// The plan of Executor.run's and plan_operations' columns (numpy arrays, contiguous).
#[allow(clippy::too_many_arguments)]
fn plan_from<'k>(
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
fn plan_operations<'py>(
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

/// Merge HDR histograms (V2 bytes) into one.
#[pyfunction]
fn histogram_merge<'py>(py: Python<'py>, parts: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let merged = histogram::merge(&refs).map_err(error::invalid)?;
    Ok(PyBytes::new(py, &histogram::encode(&merged)))
}

/// Count, min, max, mean and the values at `quantiles` (0..1) of a histogram, in ns.
#[pyfunction]
fn histogram_summary<'py>(
    py: Python<'py>,
    encoded: &[u8],
    quantiles: Vec<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let h = histogram::decode(encoded).map_err(error::invalid)?;
    let d = PyDict::new(py);
    let empty = h.is_empty();
    d.set_item("count", h.len())?;
    d.set_item("min_ns", if empty { 0 } else { h.min() })?;
    d.set_item("max_ns", if empty { 0 } else { h.max() })?;
    d.set_item("mean_ns", if empty { 0.0 } else { h.mean() })?;
    let values: Vec<u64> = quantiles
        .iter()
        .map(|&q| if empty { 0 } else { h.value_at_quantile(q) })
        .collect();
    d.set_item("quantiles_ns", values)?;
    Ok(d)
}

/// Fill `buf` with `writer`'s payload for `key` from `offset` (collect-and-write contributors).
#[pyfunction]
fn payload_fill(
    py: Python<'_>,
    mut buf: PyReadwriteArray1<u8>,
    seed: u64,
    writer: u32,
    key: &str,
    offset: u64,
) -> PyResult<()> {
    let slice = buf.as_slice_mut().map_err(|e| error::invalid(e.to_string()))?;
    let payload = payload::Payload::new(seed);
    let stream = payload::stream_id(writer, key);
    py.detach(|| payload.fill(stream, offset, slice));
    Ok(())
}

/// The first (offset, expected, found) where `buf` differs from the payload, or None.
#[pyfunction]
fn payload_check(
    py: Python<'_>,
    buf: PyReadonlyArray1<u8>,
    seed: u64,
    writer: u32,
    key: &str,
    offset: u64,
) -> PyResult<Option<(u64, u8, u8)>> {
    let slice = buf.as_slice().map_err(|e| error::invalid(e.to_string()))?;
    let payload = payload::Payload::new(seed);
    let stream = payload::stream_id(writer, key);
    let mismatch = py.detach(|| payload.check(stream, offset, slice));
    Ok(mismatch.map(|m| (m.offset, m.expected, m.found)))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_cancelled, m)?)?;
    m.add_function(wrap_pyfunction!(clock_ns, m)?)?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_merge, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_summary, m)?)?;
    m.add_function(wrap_pyfunction!(payload_fill, m)?)?;
    m.add_function(wrap_pyfunction!(payload_check, m)?)?;
    m.add_function(wrap_pyfunction!(plan_operations, m)?)?;
    m.add("REQUEST_KINDS", requests::NAMES.to_vec())?;
    m.add_class::<PyTarget>()?;
    m.add_class::<PyExecutor>()?;
    Ok(())
}
