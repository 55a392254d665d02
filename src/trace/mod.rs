//! Reading traces back (safe code, used by the CLI and the tests): the tolerant reader and the
//! checker of every rule in perfetto-json.md.

pub mod check;
pub mod compact;
pub mod convert;
pub mod merge;
pub mod read;
pub mod time;
