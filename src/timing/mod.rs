//! Time: the monotonic clock every record is stamped with, and the mapping of each device's
//! profiling clock onto it.

pub mod clock;
pub mod mapping;
pub mod sample;
