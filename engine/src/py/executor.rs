//! The Python class Executor: runs one rank's plans, in the foreground or on an engine thread.

use super::figures::PyFigures;
use super::plan::PyPlan;
use super::target::PyTarget;
use super::trace_columns::{trace_columns, TraceColumns};
use crate::{error, exec, schedstat, trace};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an abort waits for an interrupted call still running on the executor: the
/// transfers it has in flight end within a request's time, and an upload left open is billed.
const ABORT_PATIENCE: Duration = Duration::from_secs(30);

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
pub struct PyExecutor {
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

    /// `lend`, once a call another thread runs on the executor has given it back (the GIL
    /// released meanwhile), waiting at most `patience`: the clean-up after an interrupt must
    /// not fail because the interrupted call is still finishing its transfers in flight.
    fn lend_when_free<R: Send>(
        &self,
        py: Python<'_>,
        patience: Duration,
        f: impl FnOnce(&mut exec::Executor) -> R + Send,
    ) -> PyResult<R> {
        let deadline = Instant::now() + patience;
        while matches!(&*self.settled(), State::Lent | State::Background(_)) && Instant::now() < deadline {
            py.detach(|| std::thread::sleep(Duration::from_millis(5)));
        }
        self.lend(py, f)
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

    /// Abort the shared upload of `key` this rank began, if still open; the error text if
    /// that failed too. Called after an interrupt, it waits for the interrupted call.
    fn abort_shared(&self, py: Python<'_>, key: &str) -> PyResult<Option<String>> {
        self.lend_when_free(py, ABORT_PATIENCE, |inner| inner.abort_shared(key).err())
    }

    /// Execute every row of `plan` with the GIL released; failures go into figures().
    #[pyo3(signature = (plan, *, source = None, sink = None, until_ns = None))]
    fn run(
        &self,
        py: Python<'_>,
        plan: &PyPlan,
        source: Option<PyReadonlyArray1<u8>>,
        mut sink: Option<PyReadwriteArray1<u8>>,
        until_ns: Option<u64>,
    ) -> PyResult<()> {
        if until_ns.is_some() && (source.is_some() || sink.is_some()) {
            return Err(error::invalid("time-based runs (until_ns) move payload data only"));
        }
        let contiguous = |e: numpy::AsSliceError| error::invalid(e.to_string());
        let data = match (&source, &mut sink) {
            (Some(_), Some(_)) => return Err(error::invalid("give a source or a sink, not both")),
            (Some(src), None) => exec::Data::Source(src.as_slice().map_err(contiguous)?),
            (None, Some(dst)) => exec::Data::Sink(dst.as_slice_mut().map_err(contiguous)?),
            (None, None) => exec::Data::Payload,
        };
        let plan = &plan.inner;
        self.lend(py, move |inner| inner.run(plan, data, until_ns))
    }

    /// Start the plan on an engine thread and return at once (payload data only), so Python
    /// can work while it runs (training prefetches reads while it computes); wait() joins it.
    /// Until then every other call but `busy` raises RuntimeError.
    #[pyo3(signature = (plan, *, until_ns = None))]
    fn run_background(&self, plan: &PyPlan, until_ns: Option<u64>) -> PyResult<()> {
        // The plan is shared, not copied, with the engine thread.
        let plan = Arc::clone(&plan.inner);
        let mut inner = self.take()?;
        let spawned = std::thread::Builder::new().name("hpcio-background".into()).spawn(move || {
            let _counted = schedstat::Counted;
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
