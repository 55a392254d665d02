//! The memory model and the transfer classifier: safe, pure code, unit-tested without OpenCL.

pub mod classification;
pub mod classify;
pub mod cost;
pub mod device;
pub mod effects;
pub mod flags;
pub mod geometry;
pub mod kernel_source;
pub mod kinds;
pub mod memory;
pub mod rules;
