//! clxfer: an OpenCL layer that shows how a program's bytes move between host and device.
//!
//! `libclxfer.so` loads as an ICD-loader layer (`OPENCL_LAYERS`) or by `LD_PRELOAD` and forwards
//! every call untouched; the `clxfer` binary is the command line around it.

pub mod compare;
pub mod config;
pub mod diag;
pub mod event;
pub mod graph;
pub mod job;
pub mod json;
pub mod layer;
pub mod model;
pub mod perfetto;
pub mod report;
pub mod sigset;
pub mod sink;
pub mod sync;
pub mod timing;
pub mod trace;
pub mod units;
pub mod vocab;
