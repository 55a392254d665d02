//! Traces as files (safe code, used by the CLI and the tests): their formats (`format.rs`), the
//! tolerant reader, the checker of every rule in perfetto-json.md, merging and converting.

pub mod check;
pub mod compact;
pub mod convert;
pub mod format;
pub mod index;
pub mod many;
pub mod merge;
pub mod read;
