//! Where records go. So far: per-entry-point call counts, reported at exit.

pub mod counts;
