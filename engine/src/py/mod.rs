//! The Python face of the engine: one module per Python class, and the free functions.

pub mod executor;
pub mod figures;
pub mod functions;
pub mod library_rows;
pub mod payload_buffer;
pub mod plan;
pub mod recorder;
pub mod target;
pub mod trace_columns;
