//! The `cl_loader_layers` entry points: `clGetLayerInfo`, `clInitLayer`, `clInitLayerWithProperties`
//! and `clDeinitLayer` (OpenCL-Docs `extensions/cl_loader_layers.asciidoc`, and the loader facts in
//! `layer-contract.md`: ocl-icd passes 149 entries, so clxfer returns `min(own, num_entries)` and
//! never reads the next table past `num_entries`).

use super::loaded::{deinit_managed, deinit_will_come};
use super::{api, lifecycle};
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::{
    CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100, CL_LAYER_NAME, cl_layer_info,
    cl_layer_properties,
};
use opencl_sys::{CL_INVALID_VALUE, CL_SUCCESS, cl_int, cl_uint};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// Slots in clxfer's table (the OpenCL-Headers table opencl-sys mirrors).
pub const OWN_ENTRIES: usize =
    std::mem::size_of::<cl_icd_dispatch>() / std::mem::size_of::<usize>();
const NAME: &[u8] = b"clxfer: OpenCL transfer tracer\0";

static TARGET: OnceLock<cl_icd_dispatch> = OnceLock::new();
static LAYER: OnceLock<cl_icd_dispatch> = OnceLock::new();

/// The next table down, once a loader has initialised the layer.
#[inline(always)]
pub fn target() -> Option<&'static cl_icd_dispatch> {
    TARGET.get()
}

/// # Safety
/// Called by the ICD loader with the spec's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let version = CL_LAYER_API_VERSION_100.to_ne_bytes();
    let bytes: &[u8] = match param_name {
        CL_LAYER_API_VERSION => &version,
        CL_LAYER_NAME => NAME,
        _ => return CL_INVALID_VALUE,
    };
    if !param_value.is_null() {
        if param_value_size < bytes.len() {
            return CL_INVALID_VALUE;
        }
        // SAFETY: the caller provides param_value_size writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), param_value.cast(), bytes.len()) };
    }
    if !param_value_size_ret.is_null() {
        // SAFETY: the caller provides a writable size_t.
        unsafe { *param_value_size_ret = bytes.len() };
    }
    CL_SUCCESS
}

/// # Safety
/// Called by the ICD loader with the spec's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    unsafe {
        init(
            num_entries,
            target_dispatch,
            num_entries_ret,
            layer_dispatch_ret,
        )
    }
}

/// # Safety
/// Called by the ICD loader with the spec's arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayerWithProperties(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
    _properties: *const cl_layer_properties,
) -> cl_int {
    // No layer properties are defined yet beyond the list terminator.
    deinit_will_come();
    unsafe {
        init(
            num_entries,
            target_dispatch,
            num_entries_ret,
            layer_dispatch_ret,
        )
    }
}

/// Called by the Khronos loader before it unloads the layer: finish here, while calling down works.
#[unsafe(no_mangle)]
pub extern "C" fn clDeinitLayer() -> cl_int {
    lifecycle::finish();
    CL_SUCCESS
}

unsafe fn init(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    if target_dispatch.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
        return CL_INVALID_VALUE;
    }
    let n = (num_entries as usize).min(OWN_ENTRIES);
    let built = catch_unwind(AssertUnwindSafe(|| {
        let target = TARGET.get_or_init(|| {
            // SAFETY: an all-zero table is all `None`; the loader's table has num_entries slots.
            let mut copy: cl_icd_dispatch = unsafe { std::mem::zeroed() };
            unsafe {
                std::ptr::copy_nonoverlapping(
                    target_dispatch.cast::<usize>(),
                    (&mut copy as *mut cl_icd_dispatch).cast::<usize>(),
                    n,
                )
            };
            copy
        });
        LAYER.get_or_init(|| {
            let mut table = *target;
            api::install_layer(&mut table, n);
            table
        })
    }));
    let Ok(table) = built else {
        return CL_INVALID_VALUE;
    };
    crate::info!(
        "loader layer initialised: {} of {} entries, {}",
        n,
        num_entries,
        if deinit_managed() {
            "clInitLayerWithProperties"
        } else {
            "clInitLayer"
        }
    );
    // SAFETY: checked non-null above; the table lives as long as the process.
    unsafe {
        *num_entries_ret = n as cl_uint;
        *layer_dispatch_ret = table;
    }
    CL_SUCCESS
}
