//! `clxfer diff` and `clxfer check --require`: a run against another, and against rules. Above
//! the report (it compares reports), below the CLI. Files, bottom up: `figure` (one figure
//! before and after, and what is noise), `diff` (two reports of one program compared), `pair`
//! (which process goes with which), `input` (a side read from traces or reports), `render` (text,
//! Markdown, JSON, CSV).

pub mod diff;
pub mod figure;
pub mod findings;
pub mod guard;
pub mod input;
pub mod pair;
pub mod render;

pub use pair::{Diff, diff};
