//! The index of a trace too large for the viewer's page to read whole (`clxfer view`): read once,
//! JSON on every core or protobuf directly, into flat columns per track (host threads, device
//! queues and lanes) of about 29 bytes a slice and 25 an arrow, from which a view of any window
//! is answered at the detail its pixels need, and a slice's details are read again from the file
//! on a click.
//!
//! Bottom up: `colour.rs` (a slice's colour, as the page's), `track.rs` (a track's columns and
//! its windows), `arrows.rs`, `scan.rs` (a JSON line read without building it), `part.rs` (what
//! a part of the file gives), `json.rs` and `proto.rs` (the two formats read into parts),
//! `build.rs` (the parts put together), `details.rs` (a slice's details), `open.rs` (a file
//! indexed, whichever its format).

pub mod arrows;
pub mod build;
pub mod colour;
pub mod details;
pub mod json;
pub mod open;
pub mod part;
pub mod proto;
pub mod scan;
pub mod track;

pub use build::{Index, Process};
pub use details::Source;
pub use open::{Indexed, open};
pub use track::{Group, View};
