//! clxfer's own questions to the driver (object info, device profiles, destructor callbacks).
//! They go straight to the object's ICD through its dispatch table, the first word of every ICD
//! object (cl_icd.h), as a loader would: so they never pass through clxfer or another layer again,
//! and a function the driver leaves NULL is never called. They are asked only about handles the
//! driver has just accepted, so an invalid handle from the program is never read.

use crate::model::device::{DeviceKind, DeviceProfile, parse_version};
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;
use std::ffi::c_void;
use std::mem::{MaybeUninit, size_of};

/// The ICD dispatch table of a live OpenCL object.
///
/// # Safety
/// `handle` must be null or a live ICD object (one the driver accepted or returned).
pub unsafe fn icd<'a, T>(handle: *mut T) -> Option<&'a cl_icd_dispatch> {
    if handle.is_null() {
        return None;
    }
    unsafe { (*(handle as *const *const cl_icd_dispatch)).as_ref() }
}

type InfoFn<H, P> = unsafe extern "C" fn(H, P, usize, *mut c_void, *mut usize) -> cl_int;

/// One fixed-size info value.
///
/// # Safety
/// `handle` must be a live object of the kind `f` takes, and `T` the parameter's type.
unsafe fn value<H, P, T: Copy>(f: Option<InfoFn<H, P>>, handle: H, param: P) -> Option<T> {
    let f = f?;
    let mut out = MaybeUninit::<T>::zeroed();
    let (size, ptr) = (size_of::<T>(), out.as_mut_ptr().cast());
    let rc = unsafe { f(handle, param, size, ptr, std::ptr::null_mut()) };
    (rc == CL_SUCCESS).then(|| unsafe { out.assume_init() })
}

/// A variable-size info value as bytes (strings, arrays), at most 64 KiB.
unsafe fn bytes<H: Copy, P: Copy>(f: Option<InfoFn<H, P>>, handle: H, param: P) -> Option<Vec<u8>> {
    let f = f?;
    let mut size = 0usize;
    let rc = unsafe { f(handle, param, 0, std::ptr::null_mut(), &mut size) };
    if rc != CL_SUCCESS || size > 1 << 16 {
        return None;
    }
    let mut buf = vec![0u8; size];
    let rc = unsafe {
        f(
            handle,
            param,
            size,
            buf.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    (rc == CL_SUCCESS).then_some(buf)
}

unsafe fn string<H: Copy, P: Copy>(f: Option<InfoFn<H, P>>, handle: H, param: P) -> String {
    let raw = unsafe { bytes(f, handle, param) }.unwrap_or_default();
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).trim().to_string()
}

/// What the driver says about a memory object it just created.
#[derive(Debug, Default)]
pub struct MemInfo {
    pub mem_type: cl_mem_object_type,
    pub flags: cl_mem_flags,
    pub size: usize,
    pub host_ptr: usize,
    pub context: usize,
    pub parent: usize,
    pub offset: usize,
    pub element_size: usize,
}

/// # Safety
/// `mem` must be a live memory object.
pub unsafe fn mem_info(mem: cl_mem) -> Option<MemInfo> {
    let t = unsafe { icd(mem) }?;
    let f = t.clGetMemObjectInfo;
    unsafe {
        let mem_type = value(f, mem, CL_MEM_TYPE)?;
        let is_image = !matches!(mem_type, CL_MEM_OBJECT_BUFFER | CL_MEM_OBJECT_PIPE);
        Some(MemInfo {
            mem_type,
            flags: value(f, mem, CL_MEM_FLAGS).unwrap_or(0),
            size: value(f, mem, CL_MEM_SIZE).unwrap_or(0),
            host_ptr: value::<_, _, usize>(f, mem, CL_MEM_HOST_PTR).unwrap_or(0),
            context: value::<_, _, usize>(f, mem, CL_MEM_CONTEXT).unwrap_or(0),
            parent: value::<_, _, usize>(f, mem, CL_MEM_ASSOCIATED_MEMOBJECT).unwrap_or(0),
            offset: value(f, mem, CL_MEM_OFFSET).unwrap_or(0),
            element_size: if is_image {
                value(t.clGetImageInfo, mem, CL_IMAGE_ELEMENT_SIZE).unwrap_or(1)
            } else {
                1
            },
        })
    }
}

/// # Safety
/// `context` must be null or a live context.
pub unsafe fn context_devices(context: cl_context) -> Vec<usize> {
    let Some(t) = (unsafe { icd(context) }) else {
        return Vec::new();
    };
    let raw = unsafe { bytes(t.clGetContextInfo, context, CL_CONTEXT_DEVICES) };
    raw.unwrap_or_default()
        .chunks_exact(size_of::<usize>())
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

/// # Safety
/// `queue` must be null or a live command queue.
pub unsafe fn queue_device(queue: cl_command_queue) -> Option<usize> {
    let t = unsafe { icd(queue) }?;
    unsafe { value::<_, _, usize>(t.clGetCommandQueueInfo, queue, CL_QUEUE_DEVICE) }
}

/// Reads a device's profile; `index` numbers it for messages.
///
/// # Safety
/// `device` must be null or a live device.
pub unsafe fn device_profile(device: cl_device_id, index: u32) -> DeviceProfile {
    let Some(t) = (unsafe { icd(device) }) else {
        return DeviceProfile::unknown(index);
    };
    let f = t.clGetDeviceInfo;
    unsafe {
        let platform: Option<cl_platform_id> = value(f, device, CL_DEVICE_PLATFORM);
        let version = parse_version(&string(f, device, CL_DEVICE_VERSION));
        // The timer's slot exists only in the tables of OpenCL 2.1 and later drivers.
        let host_timer = version >= (2, 1)
            && t.clGetDeviceAndHostTimer.is_some_and(|timer| {
                let (mut d, mut h) = (0, 0);
                timer(device, &mut d, &mut h) == CL_SUCCESS && d != 0
            });
        let platform = platform
            .and_then(|p| Some(string(icd(p)?.clGetPlatformInfo, p, CL_PLATFORM_NAME)))
            .unwrap_or_default();
        let align_bits: cl_uint = value(f, device, CL_DEVICE_MEM_BASE_ADDR_ALIGN).unwrap_or(0);
        DeviceProfile {
            index,
            name: string(f, device, CL_DEVICE_NAME),
            vendor: string(f, device, CL_DEVICE_VENDOR),
            vendor_id: value(f, device, CL_DEVICE_VENDOR_ID).unwrap_or(0),
            platform,
            kind: DeviceKind::from_type(value(f, device, CL_DEVICE_TYPE).unwrap_or(0)),
            host_unified: value::<_, _, cl_bool>(f, device, CL_DEVICE_HOST_UNIFIED_MEMORY)
                .is_some_and(|b| b != 0),
            global_mem: value(f, device, CL_DEVICE_GLOBAL_MEM_SIZE).unwrap_or(0),
            version,
            base_addr_align: u64::from(align_bits / 8),
            host_timer,
        }
    }
}

/// Asks the driver to call `notify(mem, user_data)` when it really destroys `mem`.
///
/// # Safety
/// `mem` must be a live memory object.
pub unsafe fn on_destroy(
    mem: cl_mem,
    notify: unsafe extern "C" fn(cl_mem, *mut c_void),
    user_data: usize,
) -> bool {
    let Some(t) = (unsafe { icd(mem) }) else {
        return false;
    };
    let set = t.clSetMemObjectDestructorCallback;
    set.is_some_and(|f| unsafe { f(mem, Some(notify), user_data as *mut c_void) } == CL_SUCCESS)
}
