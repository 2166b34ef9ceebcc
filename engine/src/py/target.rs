//! The Python class Target: one storage target, opened from its URL.

use crate::{error, target};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[pyclass(name = "Target", module = "hpcio._engine", frozen)]
pub struct PyTarget {
    pub(crate) inner: Arc<dyn target::Target>,
    url: String,
    pub(crate) direct: bool,
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
