//! The module's free functions: clocks, cancellation, live counters, histograms, payload fill
//! and check.

use crate::{cancel, clock, error, histogram, live, payload, schedstat};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// How long the threads that ended so far (each that ran through `thread_ends` or is the
/// engine's) waited for a core while runnable, ns (0 where the kernel keeps no schedstat).
#[pyfunction]
pub fn ended_threads_waited_ns() -> u64 {
    schedstat::ended_threads_waited_ns()
}

/// The calling thread is about to end: count how long it waited for a core.
#[pyfunction]
pub fn thread_ends() {
    schedstat::thread_ends()
}

#[pyfunction]
pub fn clock_ns() -> u64 {
    clock::now_ns()
}

/// (bytes, operations, operations per latency bucket) transferred by this process so far.
#[pyfunction]
pub fn live_counters() -> (u64, u64, Vec<u64>) {
    live::snapshot()
}

/// The top of each of live_counters()'s latency buckets, in ns.
#[pyfunction]
pub fn live_bucket_tops() -> Vec<u64> {
    (0..live::BUCKETS).map(live::bucket_top).collect()
}

/// Interrupt (True) every running and later Executor.run of this process after the transfers
/// in flight, or allow runs again (False). Its figures then cover only what was done.
#[pyfunction(name = "cancel")]
pub fn set_cancelled(cancelled: bool) {
    cancel::set(cancelled);
}

/// True when this module was compiled without optimisations (figures would be meaningless).
#[pyfunction]
pub fn debug_build() -> bool {
    cfg!(debug_assertions)
}

/// Merge HDR histograms (V2 bytes) into one.
#[pyfunction]
pub fn histogram_merge<'py>(py: Python<'py>, parts: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let merged = histogram::merge(&refs).map_err(error::invalid)?;
    Ok(PyBytes::new(py, &histogram::encode(&merged)))
}

/// Count, min, max, mean and the values at `quantiles` (0..1) of a histogram, in ns.
#[pyfunction]
pub fn histogram_summary<'py>(
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
pub fn payload_fill(
    py: Python<'_>,
    mut buf: PyReadwriteArray1<u8>,
    seed: u64,
    writer: u32,
    key: &str,
    offset: u64,
) -> PyResult<()> {
    let slice = buf.as_slice_mut().map_err(|e| error::invalid(e.to_string()))?;
    let payload = payload::for_seed(seed);
    let stream = payload::stream_id(writer, key);
    py.detach(|| payload.fill(stream, offset, slice));
    Ok(())
}

/// The first (offset, expected, found) where `buf` differs from the payload, or None.
#[pyfunction]
pub fn payload_check(
    py: Python<'_>,
    buf: PyReadonlyArray1<u8>,
    seed: u64,
    writer: u32,
    key: &str,
    offset: u64,
) -> PyResult<Option<(u64, u8, u8)>> {
    let slice = buf.as_slice().map_err(|e| error::invalid(e.to_string()))?;
    let payload = payload::for_seed(seed);
    let stream = payload::stream_id(writer, key);
    let mismatch = py.detach(|| payload.check(stream, offset, slice));
    Ok(mismatch.map(|m| (m.offset, m.expected, m.found)))
}

