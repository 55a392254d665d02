//! The vocabulary every room shares, and the lowest room: the entry points ([`Api`], [`Via`]) and
//! the trace's schema (its keys, event names and track ids). It imports nothing of clxfer's, so
//! every other room may import it.

pub mod api;
pub mod schema;
pub mod word;

pub use api::{Api, Via};
