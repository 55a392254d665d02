//! Chrome's JSON trace format, the default (`CLXFER_FORMAT=json`): the fast writer the trace
//! writer serialises events with (`write.rs`), and the reader that gives them back (`read.rs`).
//! A room of its own below `sink` (which writes it) and `trace` (which reads it).

pub mod read;
pub mod write;

pub(crate) use write::quoted;
pub use write::{EXACT, Json};
