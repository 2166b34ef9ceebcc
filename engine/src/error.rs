//! The Python exceptions of calls that cannot go on: a malformed argument, a target that
//! cannot be used, an Executor in use. Storage failures while a plan runs are not raised:
//! they go into the figures (errors, first_errors), so every rank finishes its phase and the
//! runner reports each rank's failure.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// A target that cannot be used as asked (missing, read-only, direct I/O refused, ...).
pub fn target_error(what: &str, url: &str, e: &std::io::Error) -> PyErr {
    os_error(e.raw_os_error(), format!("{what} {url}: {e}"))
}

/// An OSError with the errno where the system gave one; without, the message alone (an
/// errno of 0 would print as "[Errno 0] ...").
fn os_error(errno: Option<i32>, message: String) -> PyErr {
    match errno {
        Some(errno) => PyOSError::new_err((errno, message)),
        None => PyOSError::new_err(message),
    }
}

/// A malformed plan or argument: a bug in the caller, never a storage failure.
pub fn invalid(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// The failure alone (errno and reason), for a caller that names the target itself. An object
/// store's outright refusal takes the errno of its kind, so Python raises ConnectionRefusedError
/// (no connection), PermissionError (credentials rejected, access denied) or FileNotFoundError
/// (no such bucket): nothing the refused request asked to write can have landed.
pub fn reason(e: &std::io::Error) -> PyErr {
    use std::io::ErrorKind;
    let refused = match e.kind() {
        ErrorKind::ConnectionRefused => Some(libc::ECONNREFUSED),
        ErrorKind::PermissionDenied => Some(libc::EACCES),
        ErrorKind::NotFound => Some(libc::ENOENT),
        _ => None,
    };
    os_error(e.raw_os_error().or(refused), e.to_string())
}

/// A call on an Executor that a plan is still using (in the background or another thread).
pub fn busy(why: impl Into<String>) -> PyErr {
    PyRuntimeError::new_err(format!("Executor is busy: {}", why.into()))
}
