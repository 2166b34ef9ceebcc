//! Engine failures -> Python exceptions, one-to-one.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;

/// A target that cannot be used as asked (missing, read-only, direct I/O refused, ...).
pub fn target_error(what: &str, url: &str, e: &std::io::Error) -> PyErr {
    let errno = e.raw_os_error().unwrap_or(0);
    PyOSError::new_err((errno, format!("{what} {url}: {e}")))
}

/// A malformed plan or argument: a bug in the caller, never a storage failure.
pub fn invalid(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// The failure alone (errno and reason), for a caller that names the target itself.
pub fn reason(e: &std::io::Error) -> PyErr {
    PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string()))
}
