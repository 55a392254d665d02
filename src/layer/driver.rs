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

/// Whether `len` bytes at `ptr` can be read, asked of the kernel (`process_vm_readv` on this
/// process fails with EFAULT instead of faulting). `true` where the kernel cannot say (a seccomp
/// filter refuses the call): clxfer then trusts the driver, as it did before asking.
fn readable(ptr: usize, len: usize) -> bool {
    let mut byte = [0u8; 64];
    let len = len.min(byte.len());
    let local = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: ptr as *mut c_void,
        iov_len: len,
    };
    // SAFETY: both iovecs describe memory of this process; the kernel checks the remote one.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == len as isize
        || (n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EFAULT))
}

/// Whether a handle a driver has just returned looks like an ICD object: an aligned, readable
/// address whose first word points to a readable dispatch table. A driver that returns a handle
/// it never made (the Khronos loader's test stub returns `SIZE_MAX` with no error code) is not
/// read through. Creation calls are rare, so the two system calls cost nothing that matters.
pub fn plausible<T>(handle: *mut T) -> bool {
    let at = handle as usize;
    let word = size_of::<usize>();
    if at == 0 || !at.is_multiple_of(word) || !readable(at, word) {
        return false;
    }
    // SAFETY: the word was just found readable.
    let table = unsafe { (handle as *const usize).read() };
    table != 0 && table.is_multiple_of(word) && readable(table, 64)
}

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

/// A queue's device and properties.
///
/// # Safety
/// `queue` must be null or a live command queue.
pub unsafe fn queue_info(queue: cl_command_queue) -> Option<(usize, cl_command_queue_properties)> {
    let t = unsafe { icd(queue) }?;
    let f = t.clGetCommandQueueInfo;
    let device = unsafe { value::<_, _, usize>(f, queue, CL_QUEUE_DEVICE) }?;
    let props = unsafe { value(f, queue, CL_QUEUE_PROPERTIES) }.unwrap_or(0);
    Some((device, props))
}

/// Turns `CL_QUEUE_PROFILING_ENABLE` on or off for the commands enqueued from now on
/// (`clSetCommandQueueProperty`, OpenCL 1.0; NVIDIA's driver still honours it). Whether the
/// driver did.
///
/// # Safety
/// `queue` is a live queue.
pub unsafe fn set_profiling(queue: cl_command_queue, on: bool) -> bool {
    let Some(f) = unsafe { icd(queue) }.and_then(|t| t.clSetCommandQueueProperty) else {
        return false;
    };
    let enable = if on { CL_TRUE } else { CL_FALSE };
    let mut old = 0;
    unsafe { f(queue, CL_QUEUE_PROFILING_ENABLE, enable, &mut old) == CL_SUCCESS }
}

/// How the driver answers `CL_QUEUE_PROPERTIES_ARRAY` for a queue made with an empty list (`{0}`):
/// the spec says with the list (its terminating 0, 8 bytes), NVIDIA's driver says nothing (0
/// bytes). Asked of a queue made for the purpose and released at once; `None` if it cannot be made.
///
/// # Safety
/// `context` and `device` are live, and the driver has just made a queue of them.
pub unsafe fn empty_list_answer(context: cl_context, device: cl_device_id) -> Option<usize> {
    let create = unsafe { icd(context) }?.clCreateCommandQueueWithProperties?;
    let empty: [cl_queue_properties; 1] = [0];
    let mut err = CL_SUCCESS;
    let queue = unsafe { create(context, device, empty.as_ptr(), &mut err) };
    if queue.is_null() || err != CL_SUCCESS {
        return None;
    }
    let t = unsafe { icd(queue) }?;
    let mut size = 0usize;
    let rc = t.clGetCommandQueueInfo.map(|f| unsafe {
        f(
            queue,
            CL_QUEUE_PROPERTIES_ARRAY,
            0,
            std::ptr::null_mut(),
            &mut size,
        )
    });
    if let Some(release) = t.clReleaseCommandQueue {
        unsafe { release(queue) };
    }
    (rc == Some(CL_SUCCESS)).then_some(size)
}

/// Whether the driver answers `clGetEventProfilingInfo` for a command of a queue made without
/// profiling: the spec says `CL_PROFILING_INFO_NOT_AVAILABLE` (PoCL, NVIDIA), Rusticl answers
/// with times. Asked of a marker on a queue made for the purpose and released at once; `None`
/// if it cannot be made.
///
/// # Safety
/// `context` and `device` are live.
pub unsafe fn answers_unprofiled(context: cl_context, device: cl_device_id) -> Option<bool> {
    let t = unsafe { icd(context) }?;
    let mut err = CL_SUCCESS;
    let queue = match t.clCreateCommandQueueWithProperties {
        Some(create) => unsafe { create(context, device, std::ptr::null(), &mut err) },
        None => unsafe { t.clCreateCommandQueue?(context, device, 0, &mut err) },
    };
    if queue.is_null() || err != CL_SUCCESS {
        return None;
    }
    let mut event: cl_event = std::ptr::null_mut();
    let rc = match t.clEnqueueMarkerWithWaitList {
        Some(marker) => unsafe { marker(queue, 0, std::ptr::null(), &mut event) },
        None => t
            .clEnqueueMarker
            .map_or(CL_INVALID_OPERATION, |marker| unsafe {
                marker(queue, &mut event)
            }),
    };
    let mut answer = None;
    if rc == CL_SUCCESS && !event.is_null() {
        let waited = t
            .clWaitForEvents
            .is_some_and(|wait| unsafe { wait(1, &event) } == CL_SUCCESS);
        if waited {
            let f = t.clGetEventProfilingInfo;
            answer = unsafe { value::<_, _, u64>(f, event, CL_PROFILING_COMMAND_END) }
                .map(|_| true)
                .or(Some(false));
        }
        unsafe { release_event(event) };
    }
    if let Some(release) = t.clReleaseCommandQueue {
        unsafe { release(queue) };
    }
    answer
}

/// A kernel's function name.
///
/// # Safety
/// `kernel` must be a live kernel.
pub unsafe fn kernel_name(kernel: cl_kernel) -> Option<String> {
    let t = unsafe { icd(kernel) }?;
    let name = unsafe { string(t.clGetKernelInfo, kernel, CL_KERNEL_FUNCTION_NAME) };
    (!name.is_empty()).then_some(name)
}

/// The program a kernel was made from.
///
/// # Safety
/// `kernel` must be a live kernel.
pub unsafe fn kernel_program(kernel: cl_kernel) -> Option<usize> {
    let f = unsafe { icd(kernel) }?.clGetKernelInfo;
    unsafe { value::<_, _, usize>(f, kernel, CL_KERNEL_PROGRAM) }.filter(|&p| p != 0)
}

/// Whether a kernel's argument points to memory it only reads (`const` or `__constant`); `None`
/// when the driver keeps no argument information (a program built without
/// `-cl-kernel-arg-info` may have none).
///
/// # Safety
/// `kernel` must be a live kernel with an argument `index`.
pub unsafe fn kernel_arg_read_only(kernel: cl_kernel, index: cl_uint) -> Option<bool> {
    let f = unsafe { icd(kernel) }?.clGetKernelArgInfo?;
    // The spec's sizes: the address qualifier is a `cl_uint`, the type qualifier a
    // `cl_bitfield` (8 bytes; opencl-sys types it narrower). Read into a zeroed u64.
    let ask = |param: cl_kernel_arg_info, size: usize| -> Option<u64> {
        let mut out = 0u64;
        let ptr = (&mut out as *mut u64).cast();
        let rc = unsafe { f(kernel, index, param, size, ptr, std::ptr::null_mut()) };
        (rc == CL_SUCCESS).then_some(out)
    };
    let address = ask(CL_KERNEL_ARG_ADDRESS_QUALIFIER, 4)?;
    let qualifiers = ask(CL_KERNEL_ARG_TYPE_QUALIFIER, 8)?;
    Some(
        address == u64::from(CL_KERNEL_ARG_ADDRESS_CONSTANT)
            || qualifiers & u64::from(CL_KERNEL_ARG_TYPE_CONST) != 0,
    )
}

/// `clRetainEvent`.
///
/// # Safety
/// `event` must be a live event.
pub unsafe fn retain_event(event: cl_event) -> bool {
    unsafe { icd(event) }
        .and_then(|t| t.clRetainEvent)
        .is_some_and(|f| unsafe { f(event) } == CL_SUCCESS)
}

/// The queue of an event's command (null for user events).
///
/// # Safety
/// `event` must be a live event.
pub unsafe fn event_queue(event: cl_event) -> Option<usize> {
    let f = unsafe { icd(event) }?.clGetEventInfo;
    unsafe { value::<_, _, usize>(f, event, CL_EVENT_COMMAND_QUEUE) }.filter(|&q| q != 0)
}

/// The context of an event.
///
/// # Safety
/// `event` must be a live event.
pub unsafe fn event_context(event: cl_event) -> Option<cl_context> {
    let f = unsafe { icd(event) }?.clGetEventInfo;
    unsafe { value::<_, _, usize>(f, event, CL_EVENT_CONTEXT) }
        .filter(|&c| c != 0)
        .map(|c| c as cl_context)
}

/// `CL_EVENT_COMMAND_EXECUTION_STATUS`: `CL_COMPLETE`, an error (negative), or still running.
///
/// # Safety
/// `event` must be a live event.
pub unsafe fn event_status(event: cl_event) -> Option<cl_int> {
    let f = unsafe { icd(event) }?.clGetEventInfo;
    unsafe { value(f, event, CL_EVENT_COMMAND_EXECUTION_STATUS) }
}

/// `clReleaseEvent`.
///
/// # Safety
/// `event` must be a live event holding a reference clxfer owns.
pub unsafe fn release_event(event: cl_event) {
    if let Some(f) = unsafe { icd(event) }.and_then(|t| t.clReleaseEvent) {
        unsafe { f(event) };
    }
}

pub type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

/// `clSetEventCallback(event, CL_COMPLETE, notify, user_data)`.
///
/// # Safety
/// `event` must be a live event; `user_data` must stay valid until `notify` runs.
pub unsafe fn on_complete(event: cl_event, notify: EventCallback, user_data: *mut c_void) -> bool {
    unsafe { icd(event) }
        .and_then(|t| t.clSetEventCallback)
        .is_some_and(|f| unsafe { f(event, CL_COMPLETE, Some(notify), user_data) } == CL_SUCCESS)
}

/// The profiling timestamps `params` (QUEUED, SUBMIT, START, END) of a completed command, in that
/// order; `None` if any query fails.
///
/// # Safety
/// `event` must be a live event.
pub unsafe fn profiling<const N: usize>(
    event: cl_event,
    params: [cl_profiling_info; N],
) -> Option<[u64; N]> {
    let f = unsafe { icd(event) }?.clGetEventProfilingInfo;
    let mut out = [0u64; N];
    for (slot, param) in out.iter_mut().zip(params) {
        *slot = unsafe { value(f, event, param) }?;
    }
    Some(out)
}

/// One `clGetDeviceAndHostTimer` reading, bracketed by clxfer's own clock:
/// (host ns before, device ns, host ns after).
///
/// # Safety
/// `device` must be a live device of OpenCL 2.1 or later.
pub unsafe fn device_timer(device: cl_device_id) -> Option<(u64, u64, u64)> {
    let f = unsafe { icd(device) }?.clGetDeviceAndHostTimer?;
    let (mut d, mut h) = (0, 0);
    let before = crate::timing::clock::now_ns();
    let rc = unsafe { f(device, &mut d, &mut h) };
    let after = crate::timing::clock::now_ns();
    (rc == CL_SUCCESS && d != 0).then_some((before, d, after))
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
            host_import: crate::model::device::host_import(&string(
                f,
                device,
                CL_DEVICE_EXTENSIONS,
            )),
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
