//! The Python class PayloadBuffer: a Python body's write buffer, refilled as the engine's lanes refill theirs.

use crate::{error, payload};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use std::sync::Arc;

/// A write buffer of a Python body's own I/O calls, filled with the payload of each transfer
/// as the engine's lanes fill theirs: when it already holds the pool bytes of the transfer's
/// position and length (1 MiB transfers at 1 MiB offsets, in any file), only the stamps are
/// rewritten, one word per 4 KiB instead of every byte. Python sees it only through `view`,
/// which is read-only, so nothing but `fill` writes into it.
#[pyclass(name = "PayloadBuffer", module = "hpcio._engine")]
pub struct PyPayloadBuffer {
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

/// What a row of writes the engine makes (library_rows) needs to stamp a PayloadBuffer between
/// calls with the GIL released: the payload, the buffer's address, and what it holds.
pub(crate) struct Stamper {
    payload: Arc<payload::Payload>,
    stream: u64,
    address: usize,
    length: usize,
    held: payload::Held,
}

impl Stamper {
    /// The buffer's first byte, where each call's data starts.
    pub(crate) fn address(&self) -> usize {
        self.address
    }

    /// Make the buffer's first `length` bytes the payload from `offset`.
    ///
    /// # Safety
    /// The PayloadBuffer is alive and borrowed by the caller for as long as this is used, so
    /// nothing else writes its buffer or frees it.
    pub(crate) unsafe fn stamp(&mut self, offset: u64) {
        // SAFETY: the caller's promise; `length` was checked against the buffer's size.
        let dst = unsafe { std::slice::from_raw_parts_mut(self.address as *mut u8, self.length) };
        self.payload.refill(self.stream, offset, dst, &mut self.held);
    }
}

impl PyPayloadBuffer {
    /// A Stamper of `writer`'s payload of `key` in transfers of `length` bytes; `put_back`
    /// returns what it leaves in the buffer.
    pub(crate) fn stamper(&mut self, py: Python<'_>, writer: u32, key: &str, length: usize) -> PyResult<Stamper> {
        let mut array = self.buffer.bind(py).readwrite();
        let slice = array.as_slice_mut().map_err(|e| error::invalid(e.to_string()))?;
        if length > slice.len() {
            return Err(error::invalid(format!("{length} bytes do not fit the buffer's {}", slice.len())));
        }
        Ok(Stamper {
            payload: Arc::clone(&self.payload),
            stream: payload::stream_id(writer, key),
            address: slice.as_mut_ptr() as usize,
            length,
            held: self.held,
        })
    }

    pub(crate) fn put_back(&mut self, stamper: Stamper) {
        self.held = stamper.held;
    }
}
