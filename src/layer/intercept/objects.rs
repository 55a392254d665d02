//! Hooks that keep the model's objects current: memory objects (created, imported, destroyed),
//! contexts, queues, kernel arguments, and SVM/USM allocations.

use super::devices::device;
use super::enqueue::{Accepted, enqueued, kernel_name};
use super::events::{Capture, capture};
use super::state::{KernelArgs, WORLD, bounded_insert};
use crate::layer::args::{self, for_args};
use crate::layer::{Call, Hook, Span, driver};
use crate::model::kernel_source::Access;
use crate::model::kinds::{MemKind, RangeKind};
use crate::model::memory::NewObject;
use opencl_sys::*;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Every call that creates a memory object (buffers, sub-buffers, images, pipes, GL/EGL objects).
pub struct MemCreated;

impl<A> Hook<A, cl_mem> for MemCreated {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), _: &A, ret: cl_mem, _: &mut Span) -> cl_mem {
        if !ret.is_null() {
            register(ret);
        }
        ret
    }
}

/// `clCreateBuffer`, `clCreateBufferWithProperties` and the four image-creating calls: the object
/// recorded, and the copy `CL_MEM_COPY_HOST_PTR` makes at creation reported as a transfer of the
/// call (`CL_MEM_HOST_PTR` names no pointer for it: the argument does).
pub struct CopyHostPtr;

/// What a creating call may copy from the host: its flags, the size (`None`: an image's, taken
/// from the object) and the host pointer.
pub struct HostCopy {
    flags: cl_mem_flags,
    size: Option<usize>,
    host_ptr: *mut c_void,
}

/// The arguments of a call that creates a buffer or an image.
pub trait CreateArgs {
    fn copied(&self) -> HostCopy;
}

/// Every creating call names its flags and host pointer alike; a buffer's gives its `(size)`.
macro_rules! create_args {
    ($($name:ident $(($size:ident))?),*) => { $(
        impl CreateArgs for args::$name {
            fn copied(&self) -> HostCopy {
                let args::$name { flags, host_ptr, $($size,)? .. } = *self;
                HostCopy { flags, size: create_args!(@size $($size)?), host_ptr }
            }
        }
    )* };
    (@size $size:ident) => { Some($size) };
    (@size) => { None };
}

create_args!(
    clCreateBuffer(size),
    clCreateBufferWithProperties(size),
    clCreateImage2D,
    clCreateImage3D,
    clCreateImage,
    clCreateImageWithProperties
);

impl<A: CreateArgs> Hook<A, cl_mem> for CopyHostPtr {
    type State = Call;
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, _: &mut A) -> Call {
        call
    }
    unsafe fn after(call: Call, a: &A, ret: cl_mem, span: &mut Span) -> cl_mem {
        created(call, ret, a.copied(), span);
        ret
    }
}

/// A memory object made with `copied`: recorded, and its upload reported where COPY_HOST_PTR
/// copied the program's bytes into it on its context's one device.
fn created(call: Call, mem: cl_mem, copied: HostCopy, span: &mut Span) {
    let HostCopy {
        flags,
        size,
        host_ptr,
    } = copied;
    if mem.is_null() || register(mem).is_none() {
        return;
    }
    if flags & CL_MEM_COPY_HOST_PTR == 0 || host_ptr.is_null() {
        return;
    }
    let (on, size) = match WORLD
        .memory
        .lock()
        .object(mem as usize)
        .map(|o| (o.residence, o.size))
    {
        Some((crate::model::memory::Place::Device(d), s)) => (d, size.map_or(s, |n| n as u64)),
        // Several devices: the bytes stay on the host until a command uses the buffer.
        _ => return,
    };
    if size == 0 {
        return;
    }
    let size = size as usize;
    let op = crate::model::classify::Op::Host {
        mem: mem as usize,
        to_device: true,
        ptr: host_ptr as usize,
        bytes: size as u64,
        span: size as u64,
        rect: false,
    };
    super::enqueue::uploaded(call, on, op, span);
}

/// Records a memory object the driver just created; returns its id.
fn register(mem: cl_mem) -> Option<u64> {
    if !driver::plausible(mem) {
        return None;
    }
    // SAFETY: the driver just returned `mem`, and it looks like an ICD object.
    let info = unsafe { driver::mem_info(mem) }?;
    let devices = context_devices(info.context);
    let new = NewObject {
        kind: match info.mem_type {
            CL_MEM_OBJECT_BUFFER => MemKind::Buffer,
            CL_MEM_OBJECT_PIPE => MemKind::Pipe,
            0 => MemKind::Other,
            _ => MemKind::Image,
        },
        context: info.context,
        flags: info.flags,
        size: info.size as u64,
        host_ptr: info.host_ptr,
        element_size: info.element_size as u64,
        parent: (info.parent != 0).then_some((info.parent, info.offset as u64)),
        sole_device: (devices.len() == 1).then(|| devices[0]),
    };
    if new.parent.is_some() {
        super::races::sub_buffer_made();
    }
    let id = WORLD.memory.lock().add_object(mem as usize, new)?;
    // SAFETY: as above; the callback forgets the object when the driver really destroys it.
    unsafe { driver::on_destroy(mem, destroyed, id as usize) };
    Some(id)
}

unsafe extern "C" fn destroyed(mem: cl_mem, id: *mut c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        WORLD.memory.lock().remove_object(mem as usize, id as u64);
        super::races::released(mem as usize);
    }));
}

/// The devices of a context, cached.
fn context_devices(context: usize) -> Vec<usize> {
    if let Some(devices) = WORLD.contexts.read().get(&context) {
        return devices.clone();
    }
    // SAFETY: `context` belongs to an object the driver accepted or returned.
    let devices = unsafe { driver::context_devices(context as cl_context) };
    bounded_insert(&mut WORLD.contexts.write(), context, devices.clone());
    devices
}

/// `clImportMemoryARM`: the imported host range is pinned for the object's life.
pub struct Imported;

impl Hook<args::clImportMemoryARM, cl_mem> for Imported {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clImportMemoryARM) {}
    unsafe fn after(_: (), args: &args::clImportMemoryARM, ret: cl_mem, _: &mut Span) -> cl_mem {
        if !ret.is_null() && register(ret).is_some() {
            let (ptr, len, owner) = (args.memory as usize, args.size as u64, Some(ret as usize));
            WORLD
                .memory
                .lock()
                .add_range(ptr, len, RangeKind::Imported, owner);
        }
        ret
    }
}

/// Context creation: learn its devices (and profile them, which says which rules apply).
pub struct ContextCreated;

impl<A> Hook<A, cl_context> for ContextCreated {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), _: &A, ret: cl_context, _: &mut Span) -> cl_context {
        if !ret.is_null() && driver::plausible(ret) {
            WORLD.contexts.write().remove(&(ret as usize));
            for d in context_devices(ret as usize) {
                device(d);
            }
        }
        ret
    }
}

/// Kernel creation: a new kernel (perhaps at a freed kernel's address) has no arguments yet; a
/// clone has its source's.
pub struct KernelCreated;

impl<A> Hook<A, cl_kernel> for KernelCreated {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), _: &A, ret: cl_kernel, _: &mut Span) -> cl_kernel {
        WORLD.kernels.lock().remove(&(ret as usize));
        WORLD.kernel_names.lock().remove(&(ret as usize));
        ret
    }
}

pub struct KernelCloned;

impl Hook<args::clCloneKernel, cl_kernel> for KernelCloned {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clCloneKernel) {}
    unsafe fn after(_: (), args: &args::clCloneKernel, ret: cl_kernel, _: &mut Span) -> cl_kernel {
        if !ret.is_null() {
            WORLD.kernel_names.lock().remove(&(ret as usize));
            let mut kernels = WORLD.kernels.lock();
            let source = kernels
                .get(&(args.source_kernel as usize))
                .cloned()
                .unwrap_or_default();
            bounded_insert(&mut kernels, ret as usize, source);
        }
        ret
    }
}

/// `clSetKernelArg`: which memory objects a kernel will use.
pub struct KernelArg;

impl Hook<args::clSetKernelArg, cl_int> for KernelArg {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clSetKernelArg) {}
    unsafe fn after(
        _: (),
        &args::clSetKernelArg {
            kernel,
            arg_index: index,
            arg_size: size,
            arg_value: value,
        }: &args::clSetKernelArg,
        ret: cl_int,
        _: &mut Span,
    ) -> cl_int {
        if ret != CL_SUCCESS {
            return ret;
        }
        // The driver accepted the argument, so `value` points to `size` readable bytes.
        let handle = if size == size_of::<cl_mem>() && !value.is_null() {
            unsafe { (value as *const usize).read_unaligned() }
        } else {
            0
        };
        let is_mem = handle != 0 && WORLD.memory.lock().object(handle).is_some();
        // How the kernel uses the argument, judged once per argument (it cannot change).
        let known = (WORLD.kernels.lock().get(&(kernel as usize)))
            .and_then(|a| a.judged.iter().find(|q| q.0 == index).map(|q| q.1.clone()));
        let judged = match known {
            Some(_) => None,
            // SAFETY: the driver accepted argument `index` of this kernel.
            None if is_mem => Some(unsafe { judge(kernel, index) }),
            None => None,
        };
        let mut kernels = WORLD.kernels.lock();
        if !kernels.contains_key(&(kernel as usize)) {
            bounded_insert(&mut kernels, kernel as usize, KernelArgs::default());
        }
        if let Some(args) = kernels.get_mut(&(kernel as usize)) {
            args.mems.retain(|&(i, _)| i != index);
            if is_mem {
                args.mems.push((index, handle));
                if let Some(j) = judged {
                    args.judged.push((index, j));
                }
            }
        }
        ret
    }
}

/// How argument `index` of `kernel` is used: what the program's source shows
/// (`model::kernel_source`), else what the driver's argument information declares, else
/// nothing to go by.
///
/// # Safety
/// The driver accepted argument `index` of `kernel`.
unsafe fn judge(kernel: cl_kernel, index: cl_uint) -> Access {
    let name = kernel_name(kernel);
    let program = unsafe { driver::kernel_program(kernel) };
    let source = match (program, &name) {
        (Some(p), Some(n)) => super::programs::judged(p, n, index),
        _ => None,
    };
    if let Some(a @ (Access::Reads(_) | Access::Writes(_))) = &source {
        return a.clone();
    }
    let declared = unsafe { driver::kernel_arg_read_only(kernel, index) };
    match (declared, source) {
        (Some(true), _) => Access::Reads(
            "a pointer to `const` or `__constant` (the driver's argument information)".into(),
        ),
        (Some(false), Some(a @ Access::MayWrite(_))) => a,
        (Some(false), _) => {
            Access::MayWrite("not `const` (the driver's argument information)".into())
        }
        (None, Some(a @ (Access::MayWrite(_) | Access::Unsure(_)))) => a,
        (None, Some(Access::NotMemory)) => {
            Access::Unsure("the program's source declares no pointer, image or pipe there".into())
        }
        (None, _) => Access::Unsure(
            "a program from a binary or IL, and the driver keeps no argument information".into(),
        ),
    }
}

/// The memory objects a kernel's arguments name now, each with how the kernel uses it.
pub(super) fn kernel_args(kernel: cl_kernel) -> Vec<(usize, Access)> {
    let kernels = WORLD.kernels.lock();
    let Some(a) = kernels.get(&(kernel as usize)) else {
        return Vec::new();
    };
    let judged = |i: u32| {
        (a.judged.iter().find(|q| q.0 == i)).map_or(Access::Unsure(String::new()), |q| q.1.clone())
    };
    a.mems.iter().map(|&(i, m)| (m, judged(i))).collect()
}

/// `clSVMAlloc`, `clSVMAllocARM`.
pub struct SvmAlloc;

for_args!([clSVMAlloc, clSVMAllocARM]
impl Hook<Args, *mut c_void> for SvmAlloc {
    type State = ();
    unsafe fn before(_: Call, _: &mut Args) {}
    unsafe fn after(_: (), args: &Args, ret: *mut c_void, _: &mut Span) -> *mut c_void {
        if !ret.is_null() {
            let kind = RangeKind::Svm { flags: args.flags };
            let on = occupies(args.context as usize, 0, kind);
            WORLD
                .memory
                .lock()
                .add_allocation(ret as usize, args.size as u64, kind, on);
        }
        ret
    }
});

/// `clSVMFree`, `clSVMFreeARM`.
pub struct SvmFree;

for_args!([clSVMFree, clSVMFreeARM]
impl Hook<Args, ()> for SvmFree {
    type State = ();
    unsafe fn before(_: Call, _: &mut Args) {}
    unsafe fn after(_: (), args: &Args, _: (), _: &mut Span) {
        WORLD.memory.lock().remove_allocation(args.svm_pointer as usize);
    }
});

/// `clEnqueueSVMFree(ARM)`: the pointers are gone once the command is enqueued.
pub struct EnqueueSvmFree;

for_args!([clEnqueueSVMFree, clEnqueueSVMFreeARM]
impl Hook<Args, cl_int> for EnqueueSvmFree {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, args: &mut Args) -> (Call, Capture) {
        let queue = args.command_queue;
        (call, capture(&mut args.event, queue, crate::timing::sample::Sample::Other))
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        args: &Args,
        ret: cl_int,
        span: &mut Span,
    ) -> cl_int {
        super::events::settle(&cap, args.command_queue);
        if ret == CL_SUCCESS {
            unsafe { enqueued(call, cap, Accepted::of(args), span) };
        }
        if ret == CL_SUCCESS && !args.svm_pointers.is_null() {
            // The driver accepted the array of `num_svm_pointers` pointers.
            let n = args.num_svm_pointers as usize;
            let ptrs = unsafe { std::slice::from_raw_parts(args.svm_pointers, n) };
            let mut memory = WORLD.memory.lock();
            for &p in ptrs {
                memory.remove_allocation(p as usize);
            }
        }
        ret
    }
});

/// `clHostMemAllocINTEL`.
pub struct UsmHostAlloc;

impl Hook<args::clHostMemAllocINTEL, *mut c_void> for UsmHostAlloc {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clHostMemAllocINTEL) {}
    unsafe fn after(
        _: (),
        args: &args::clHostMemAllocINTEL,
        ret: *mut c_void,
        _: &mut Span,
    ) -> *mut c_void {
        usm_allocated(ret, args.size, RangeKind::UsmHost, None)
    }
}

/// `clDeviceMemAllocINTEL` (`SHARED == false`) and `clSharedMemAllocINTEL`.
pub struct UsmAlloc<const SHARED: bool>;

for_args!([clDeviceMemAllocINTEL, clSharedMemAllocINTEL]
impl<const SHARED: bool> Hook<Args, *mut c_void> for UsmAlloc<SHARED> {
    type State = ();
    unsafe fn before(_: Call, _: &mut Args) {}
    unsafe fn after(_: (), args: &Args, ret: *mut c_void, _: &mut Span) -> *mut c_void {
        let kind = if SHARED {
            RangeKind::UsmShared
        } else {
            RangeKind::UsmDevice
        };
        let on = occupies(args.context as usize, args.device as usize, kind);
        usm_allocated(ret, args.size, kind, on)
    }
});

/// The device whose memory an SVM or USM allocation takes, by its rules: the one named, else the
/// context's only device (in a context of several, clxfer cannot tell which: none is counted).
fn occupies(context: usize, named: usize, kind: RangeKind) -> Option<usize> {
    let d = match named {
        0 => match context_devices(context).as_slice() {
            &[only] => only,
            _ => return None,
        },
        d => d,
    };
    let dev = device(d)?;
    (dev.rules.allocation(kind) == crate::model::rules::Placement::Device).then_some(d)
}

fn usm_allocated(ret: *mut c_void, size: usize, kind: RangeKind, on: Option<usize>) -> *mut c_void {
    if !ret.is_null() {
        WORLD
            .memory
            .lock()
            .add_allocation(ret as usize, size as u64, kind, on);
    }
    ret
}

/// `clMemFreeINTEL`, `clMemBlockingFreeINTEL`.
pub struct UsmFree;

for_args!([clMemFreeINTEL, clMemBlockingFreeINTEL]
impl Hook<Args, cl_int> for UsmFree {
    type State = ();
    unsafe fn before(_: Call, _: &mut Args) {}
    unsafe fn after(_: (), args: &Args, ret: cl_int, _: &mut Span) -> cl_int {
        if ret == CL_SUCCESS {
            WORLD.memory.lock().remove_allocation(args.ptr as usize);
        }
        ret
    }
});
