//! Where records go. So far: per-entry-point call counts and per-path transfer counts, reported at
//! exit.

pub mod counts;
pub mod transfers;
