//! hpcio._engine: every byte of storage I/O. Registration only; logic lives in the modules.

mod batch;
mod buffer;
mod cancel;
mod clock;
mod error;
mod journal;
pub mod exec;
pub mod figures;
pub mod histogram;
mod lanes;
pub mod payload;
pub mod plan;
pub mod recorder;
pub mod requests;
pub mod schedstat;
pub mod series;
mod shuffle;
pub mod target;
pub mod timeline;
pub mod trace;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How long the threads that ended so far (each that ran through `thread_ends` or is the
/// engine's) waited for a core while runnable, ns (0 where the kernel keeps no schedstat).
#[pyfunction]
fn ended_threads_waited_ns() -> u64 {
    schedstat::ended_threads_waited_ns()
}

/// The calling thread is about to end: count how long it waited for a core.
#[pyfunction]
fn thread_ends() {
    schedstat::thread_ends()
}

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
    /// sizes an object target's I/O runtime; multipart uploads in progress are journaled in
    /// `journal_dir` under `job` (runner/journal.py), not at all without it.
    #[new]
    #[pyo3(
        signature = (url, *, direct = false, in_flight = 1, options = BTreeMap::new(), journal_dir = None, job = String::new()),
        text_signature = "(url, *, direct=False, in_flight=1, options={}, journal_dir=None, job='')"
    )]
    fn new(
        url: &str,
        direct: bool,
        in_flight: usize,
        options: BTreeMap<String, String>,
        journal_dir: Option<PathBuf>,
        job: String,
    ) -> PyResult<Self> {
        let options = target::OpenOptions { direct, in_flight, store: options, journal_dir, job };
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

/// What a rank did in a phase, from a plan (Executor.figures) or from Python's own calls
/// (Recorder.figures): the same fields either way. Times are ns since the phase's t0.
#[pyclass(name = "Figures", module = "hpcio._engine", frozen)]
struct PyFigures {
    inner: figures::Figures,
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

/// Where an Executor is: ready, running a plan on its own engine thread, or lent to a call
/// that released the GIL (so that no other call can reach it meanwhile).
enum State {
    Idle(Box<exec::Executor>),
    Background(JoinHandle<Box<exec::Executor>>),
    Lent,
    /// Its engine thread panicked; the executor went with it.
    Lost,
}

#[pyclass(name = "Executor", module = "hpcio._engine", frozen)]
struct PyExecutor {
    // A lock held only for moments and never while the GIL is released, so a second Python
    // thread finds the executor busy instead of waiting for it with the GIL held.
    state: Mutex<State>,
}

fn busy_error(state: &State) -> PyErr {
    match state {
        State::Background(_) => error::busy("a plan runs in the background; call wait() first"),
        State::Lost => error::busy("its background plan's engine thread panicked"),
        _ => error::busy("another thread is running a call on it"),
    }
}

impl PyExecutor {
    /// The state, with a background plan that has ended joined already.
    fn settled(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap();
        if matches!(&*state, State::Background(h) if h.is_finished()) {
            let State::Background(handle) = std::mem::replace(&mut *state, State::Lost) else { unreachable!() };
            if let Ok(inner) = handle.join() {
                *state = State::Idle(inner);
            }
        }
        state
    }

    /// `f` on the idle executor, the GIL held (quick calls only).
    fn with<R>(&self, f: impl FnOnce(&mut exec::Executor) -> R) -> PyResult<R> {
        match &mut *self.settled() {
            State::Idle(inner) => Ok(f(inner)),
            other => Err(busy_error(other)),
        }
    }

    /// Take the idle executor out for a call that releases the GIL; `give` puts it back.
    fn take(&self) -> PyResult<Box<exec::Executor>> {
        let mut state = self.settled();
        match std::mem::replace(&mut *state, State::Lent) {
            State::Idle(inner) => Ok(inner),
            other => {
                let e = busy_error(&other);
                *state = other;
                Err(e)
            }
        }
    }

    fn give(&self, inner: Box<exec::Executor>) {
        *self.state.lock().unwrap() = State::Idle(inner);
    }

    /// `f` on the executor with the GIL released.
    fn lend<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut exec::Executor) -> R + Send) -> PyResult<R> {
        let mut inner = self.take()?;
        let out = py.detach(|| f(&mut inner));
        self.give(inner);
        Ok(out)
    }
}

#[pymethods]
impl PyExecutor {
    /// Buffers of `buffer_bytes` are allocated and touched here, before any clock starts.
    #[new]
    /// With `trace`, every operation (up to `trace_limit`) is kept for take_trace().
    #[pyo3(signature = (target, *, seed, t0_ns = 0, in_flight = 1, verify = false, buffer_bytes = 0, trace = false, trace_limit = trace::DEFAULT_LIMIT))]
    // One argument per keyword of the Python signature.
    #[allow(clippy::too_many_arguments)]
    fn new(
        target: &PyTarget,
        seed: u64,
        t0_ns: u64,
        in_flight: usize,
        verify: bool,
        buffer_bytes: usize,
        trace: bool,
        trace_limit: usize,
    ) -> Self {
        let mut inner =
            exec::Executor::new(target.inner.clone(), seed, t0_ns, in_flight, verify, target.direct);
        if buffer_bytes > 0 {
            inner.reserve(buffer_bytes);
        }
        if trace {
            inner.trace(trace_limit);
        }
        Self { state: Mutex::new(State::Idle(Box::new(inner))) }
    }

    /// Set the phase's t0 (ns, from clock_ns() right after the barrier).
    fn start(&self, t0_ns: u64) -> PyResult<()> {
        self.with(|inner| inner.start(t0_ns))
    }

    /// The next open of `key` for writing is followed by `writes` writes of `part_bytes`.
    fn expect(&self, key: &str, writes: u64, part_bytes: u64) -> PyResult<()> {
        self.with(|inner| inner.expect(key, writes, part_bytes))
    }

    /// Start a shared upload (timed as an open); None if it failed (see figures()).
    fn begin_shared(&self, py: Python<'_>, key: &str, part_bytes: u64) -> PyResult<Option<String>> {
        self.lend(py, |inner| inner.begin_shared(key, part_bytes).ok())
    }

    fn join_shared(&self, key: &str, id: &str, part_bytes: u64) -> PyResult<()> {
        self.with(|inner| inner.join_shared(key, id, part_bytes))
    }

    /// (part index, receipt) of every part this rank put into the shared upload of `key`.
    fn take_receipts(&self, key: &str) -> PyResult<Vec<(u32, String)>> {
        self.with(|inner| inner.take_receipts(key))
    }

    /// Complete a shared upload (timed as a close); False if it failed (see figures()).
    fn finish_shared(&self, py: Python<'_>, key: &str, id: &str, receipts: Vec<(u32, String)>) -> PyResult<bool> {
        self.lend(py, |inner| inner.finish_shared(key, id, receipts).is_ok())
    }

    /// Abort a shared upload; the error text if that failed too.
    fn abort_shared(&self, py: Python<'_>, key: &str, id: &str) -> PyResult<Option<String>> {
        self.lend(py, |inner| inner.abort_shared(key, id).err())
    }

    /// `shuffle`: (seed, rank, phase) of a random order of each batch of transfers.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (ops, key_index, offsets, lengths, counts, strides, writers, keys, *, shuffle = None, source = None, sink = None, until_ns = None))]
    fn run(
        &self,
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
        self.lend(py, move |inner| inner.run(&plan, data, until_ns))
    }

    /// Start the plan on an engine thread and return at once (payload data only), so Python
    /// can work while it runs (training prefetches reads while it computes); wait() joins it.
    /// Until then every other call but `busy` raises RuntimeError.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (ops, key_index, offsets, lengths, counts, strides, writers, keys, *, shuffle = None, until_ns = None))]
    fn run_background(
        &self,
        ops: PyReadonlyArray1<u8>,
        key_index: PyReadonlyArray1<u32>,
        offsets: PyReadonlyArray1<u64>,
        lengths: PyReadonlyArray1<u64>,
        counts: PyReadonlyArray1<u64>,
        strides: PyReadonlyArray1<u64>,
        writers: PyReadonlyArray1<u32>,
        keys: Vec<String>,
        shuffle: Option<(u64, u64, u64)>,
        until_ns: Option<u64>,
    ) -> PyResult<()> {
        let plan = plan_from(&ops, &key_index, &offsets, &lengths, &counts, &strides, &writers, &keys, shuffle)?;
        // The rows are owned; the keys they index go with them to the engine thread.
        let (rows, shuffle) = (plan.rows, plan.shuffle);
        let mut inner = self.take()?;
        let spawned = std::thread::Builder::new().name("hpcio-background".into()).spawn(move || {
            let _counted = schedstat::Counted;
            let plan = plan::Plan { rows, keys: &keys, shuffle };
            inner.run(&plan, exec::Data::Payload, until_ns);
            inner
        });
        match spawned {
            Ok(handle) => {
                *self.state.lock().unwrap() = State::Background(handle);
                Ok(())
            }
            Err(e) => {
                // The closure, and the executor in it, are gone with the failed spawn.
                *self.state.lock().unwrap() = State::Lost;
                Err(error::busy(format!("cannot start an engine thread: {e}")))
            }
        }
    }

    /// Join the plan run_background started (at once if none runs), with the GIL released.
    /// _engine.cancel(True) stops it after its transfers in flight.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        let handle = {
            let mut state = self.state.lock().unwrap();
            match std::mem::replace(&mut *state, State::Lent) {
                State::Background(handle) => handle,
                State::Idle(inner) => {
                    *state = State::Idle(inner);
                    return Ok(());
                }
                other => {
                    let e = busy_error(&other);
                    *state = other;
                    return Err(e);
                }
            }
        };
        match py.detach(|| handle.join()) {
            Ok(inner) => {
                self.give(inner);
                Ok(())
            }
            Err(_) => {
                *self.state.lock().unwrap() = State::Lost;
                Err(busy_error(&State::Lost))
            }
        }
    }

    /// Whether a plan is running on it (in the background, or in another thread's call).
    #[getter]
    fn busy(&self) -> bool {
        !matches!(&*self.settled(), State::Idle(_))
    }

    /// Everything run so far (times in ns since t0), with the requests the target issued.
    fn figures(&self) -> PyResult<PyFigures> {
        self.with(|inner| PyFigures { inner: inner.figures() })
    }

    /// The operations traced since the last call, as columns (see TraceColumns); None when
    /// the executor does not trace.
    fn take_trace<'py>(&self, py: Python<'py>) -> PyResult<Option<TraceColumns<'py>>> {
        let taken = self.with(|inner| inner.take_trace())?;
        Ok(taken.map(|t| trace_columns(py, t)))
    }
}

/// (file names, op codes (TRACE_OPS), file index, offsets (-1: none), lengths, starts, ends,
/// operations past the limit, not kept), times on clock_ns()'s scale. The columns move to
/// numpy without a copy.
type TraceColumns<'py> = (
    Vec<String>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u64>>,
    u64,
);

fn trace_columns(py: Python<'_>, t: trace::Trace) -> TraceColumns<'_> {
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

/// Figures for I/O a Python body does itself (h5py, netCDF4, MPI-IO, ...): it times each call
/// with clock_ns() and records it here, and gets what a plan doing that I/O would yield.
#[pyclass(name = "Recorder", module = "hpcio._engine")]
struct PyRecorder {
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
    let payload = payload::for_seed(seed);
    let stream = payload::stream_id(writer, key);
    py.detach(|| payload.fill(stream, offset, slice));
    Ok(())
}

/// A write buffer of a Python body's own I/O calls, filled with the payload of each transfer
/// as the engine's lanes fill theirs: when it already holds the pool bytes of the transfer's
/// position and length (1 MiB transfers at 1 MiB offsets, in any file), only the stamps are
/// rewritten, one word per 4 KiB instead of every byte. Python sees it only through `view`,
/// which is read-only, so nothing but `fill` writes into it.
#[pyclass(name = "PayloadBuffer", module = "hpcio._engine")]
struct PyPayloadBuffer {
    payload: Arc<payload::Payload>,
    buffer: Py<PyArray1<u8>>,
    view: Py<PyAny>,
    held: payload::Held,
}

#[pymethods]
impl PyPayloadBuffer {
    #[new]
    fn new(py: Python<'_>, seed: u64, capacity: usize) -> PyResult<Self> {
        let buffer = PyArray1::<u8>::zeros(py, capacity, false);
        let view = buffer.call_method0("view")?;
        view.getattr("flags")?.setattr("writeable", false)?;
        Ok(Self {
            payload: payload::for_seed(seed),
            buffer: buffer.unbind(),
            view: view.unbind(),
            held: payload::Held::default(),
        })
    }

    /// The whole buffer, read-only; after `fill`, `view[:length]` is the transfer's data.
    #[getter]
    fn view(&self, py: Python<'_>) -> Py<PyAny> {
        self.view.clone_ref(py)
    }

    /// Make the first `length` bytes `writer`'s payload of `key` from `offset`.
    fn fill(&mut self, py: Python<'_>, writer: u32, key: &str, offset: u64, length: usize) -> PyResult<()> {
        let mut array = self.buffer.bind(py).readwrite();
        let slice = array.as_slice_mut().map_err(|e| error::invalid(e.to_string()))?;
        let Some(dst) = slice.get_mut(..length) else {
            return Err(error::invalid(format!("{length} bytes do not fit the buffer's {}", slice.len())));
        };
        let stream = payload::stream_id(writer, key);
        self.payload.refill(stream, offset, dst, &mut self.held);
        Ok(())
    }
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
    let payload = payload::for_seed(seed);
    let stream = payload::stream_id(writer, key);
    let mismatch = py.detach(|| payload.check(stream, offset, slice));
    Ok(mismatch.map(|m| (m.offset, m.expected, m.found)))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_cancelled, m)?)?;
    m.add_function(wrap_pyfunction!(clock_ns, m)?)?;
    m.add_function(wrap_pyfunction!(ended_threads_waited_ns, m)?)?;
    m.add_function(wrap_pyfunction!(thread_ends, m)?)?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_merge, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_summary, m)?)?;
    m.add_function(wrap_pyfunction!(payload_fill, m)?)?;
    m.add_function(wrap_pyfunction!(payload_check, m)?)?;
    m.add_function(wrap_pyfunction!(plan_operations, m)?)?;
    m.add("REQUEST_KINDS", requests::NAMES.to_vec())?;
    m.add("STORE_FAILURES", requests::FAILURES.to_vec())?;
    m.add("TRACE_OPS", trace::NAMES.to_vec())?;
    m.add("TRACE_LIMIT", trace::DEFAULT_LIMIT)?;
    m.add_class::<PyTarget>()?;
    m.add_class::<PyExecutor>()?;
    m.add_class::<PyFigures>()?;
    m.add_class::<PyRecorder>()?;
    m.add_class::<PyPayloadBuffer>()?;
    Ok(())
}
