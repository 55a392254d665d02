//! Perfetto's native trace format, protobuf (`CLXFER_FORMAT=perfetto`, `clxfer convert`): the
//! events of clxfer's trace (`crate::event`) as `TrackEvent` packets and back. A room of its own below `sink`
//! (which writes it) and `trace` (which reads it); it knows only the schema's words.

pub mod clocks;
pub mod decode;
pub mod emit;
pub mod encode;
pub mod fields;
pub mod intern;
pub mod rules;
pub mod wire;
