//! The entry points as functions: the list in `vocab/api.rs`, expanded here by `expand.rs` into
//! the LD_PRELOAD exports, the loader-layer table and the extension wrappers. The hooks and the
//! FFI types of the list resolve in this module.

#![allow(clippy::too_many_arguments)]

use super::expand::cl_entry_points;
use super::{extensions, intercept};
use crate::vocab::Api;
use crate::vocab::api::entry_points;
use opencl_sys::cl_egl::*;
use opencl_sys::*;
use std::ffi::{c_char, c_void};

entry_points!(cl_entry_points);

/// The extension wrappers the extension-address hooks return (`extensions::Wrappers`).
pub struct Wrapped;

impl extensions::Wrappers for Wrapped {
    fn wrapper(api: Api) -> Option<*mut c_void> {
        extension_wrapper(api)
    }
}
