//! hpcio._engine: every byte of storage I/O. Registration only: the Python classes and
//! functions live in py/, one module per class, and the logic in the modules below.

mod batch;
mod buffer;
mod cancel;
mod clock;
mod error;
mod journal;
pub mod exec;
pub mod figures;
pub mod first_byte;
pub mod histogram;
mod lanes;
mod library_rows;
pub mod live;
pub mod payload;
pub mod plan;
mod py;
pub mod recorder;
pub mod requests;
pub mod schedstat;
pub mod series;
mod shuffle;
pub mod target;
pub mod timeline;
pub mod trace;

use py::executor::PyExecutor;
use py::figures::PyFigures;
use py::functions::*;
use py::library_rows::{hdf5_row, mpiio_row, pnetcdf_row};
use py::payload_buffer::PyPayloadBuffer;
use py::plan::PyPlan;
use py::recorder::PyRecorder;
use py::target::PyTarget;
use pyo3::prelude::*;

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_cancelled, m)?)?;
    m.add_function(wrap_pyfunction!(clock_ns, m)?)?;
    m.add_function(wrap_pyfunction!(ended_threads_waited_ns, m)?)?;
    m.add_function(wrap_pyfunction!(thread_ends, m)?)?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add_function(wrap_pyfunction!(live_counters, m)?)?;
    m.add_function(wrap_pyfunction!(live_bucket_tops, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_merge, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_summary, m)?)?;
    m.add_function(wrap_pyfunction!(payload_fill, m)?)?;
    m.add_function(wrap_pyfunction!(payload_check, m)?)?;
    m.add_function(wrap_pyfunction!(hdf5_row, m)?)?;
    m.add_function(wrap_pyfunction!(mpiio_row, m)?)?;
    m.add_function(wrap_pyfunction!(pnetcdf_row, m)?)?;
    m.add("REQUEST_KINDS", requests::NAMES.to_vec())?;
    m.add("STORE_FAILURES", requests::FAILURES.to_vec())?;
    m.add("TRACE_OPS", trace::NAMES.to_vec())?;
    m.add("TRACE_LIMIT", trace::DEFAULT_LIMIT)?;
    m.add_class::<PyTarget>()?;
    m.add_class::<PyPlan>()?;
    m.add_class::<PyExecutor>()?;
    m.add_class::<PyFigures>()?;
    m.add_class::<PyRecorder>()?;
    m.add_class::<PyPayloadBuffer>()?;
    Ok(())
}
