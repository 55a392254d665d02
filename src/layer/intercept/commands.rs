//! What each transfer-like enqueue does, read from its arguments (arrays only after the driver
//! accepted them). One `Command` per shape; SVM, ARM SVM and USM calls of one shape share it.

use super::enqueue::Command;
use super::objects::kernel_args;
use super::races::{Touch, Touches};
use super::state::WORLD;
use crate::graph::race::{Certainty, Use};
use crate::model::classify::Op;
use crate::model::geometry::Region;
use crate::model::kernel_source::Access;
use crate::timing::sample::Sample;
use opencl_sys::*;
use std::ffi::c_void;

/// A host pointer argument, `*const` or `*mut`.
pub trait Addr: Copy {
    fn addr(self) -> usize;
}
impl<T> Addr for *const T {
    fn addr(self) -> usize {
        self as usize
    }
}
impl<T> Addr for *mut T {
    fn addr(self) -> usize {
        self as usize
    }
}

/// Three `size_t`s the driver has read (origin, region); zeros for NULL.
///
/// # Safety
/// `p` is null or points to three readable `size_t`s.
pub(super) unsafe fn triple(p: *const usize) -> [usize; 3] {
    if p.is_null() {
        [0; 3]
    } else {
        unsafe { (p as *const [usize; 3]).read_unaligned() }
    }
}

pub(super) fn element_size(mem: cl_mem) -> u64 {
    WORLD
        .memory
        .lock()
        .object(mem as usize)
        .map_or(1, |o| o.element_size)
}

/// The bytes a `region` of `mem`'s elements holds.
unsafe fn region_bytes(mem: cl_mem, region: *const usize) -> u64 {
    let region = unsafe { triple(region) };
    Region {
        origin: [0; 3],
        region,
        row_pitch: 0,
        slice_pitch: 0,
        element_size: element_size(mem),
    }
    .extent()
    .bytes
}

/// An unmap, to the sampler: the size of the mapping it ends (unknown: timed).
fn mapped(handle: usize, ptr: usize) -> Sample {
    match WORLD.memory.lock().mapping(handle, ptr) {
        Some(m) => Sample::Bytes(m.len),
        None => Sample::Always,
    }
}

/// One `Command` impl; `[generics]` first when the impl needs them.
macro_rules! command {
    ([$($gen:tt)*] $name:ty, $args:ty,
        |$a:ident| blocking: $blocking:expr, op: $op:expr $(, kernel: $kernel:expr)?
        $(, touches: $touches:expr)? $(, sample: $sample:expr)?) => {
        impl<$($gen)*> Command<$args> for $name {
            fn blocking($a: &$args) -> bool {
                let _ = $a;
                $blocking
            }
            unsafe fn op($a: &$args) -> Option<Op> {
                let _ = $a;
                #[allow(unused_unsafe)]
                unsafe {
                    $op
                }
            }
            $(fn kernel($a: &$args) -> Option<cl_kernel> {
                Some($kernel)
            })?
            $(unsafe fn touches($a: &$args) -> Touches {
                #[allow(unused_unsafe)]
                unsafe {
                    $touches
                }
            })?
            $(fn sample($a: &$args) -> Sample {
                let _ = $a;
                $sample
            })?
        }
    };
    ($name:ty, $args:ty, |$a:ident| blocking: $blocking:expr, op: $op:expr $(, kernel: $kernel:expr)?
        $(, touches: $touches:expr)? $(, sample: $sample:expr)?) => {
        command!([] $name, $args, |$a| blocking: $blocking, op: $op $(, kernel: $kernel)? $(, touches: $touches)? $(, sample: $sample)?);
    };
}

/// Bytes `offset..offset + size` of `mem`, used as `use_` (known).
pub(super) fn touch(mem: cl_mem, offset: usize, size: usize, use_: Use) -> Touch {
    Touch {
        object: mem as usize,
        range: (offset as u64, offset.saturating_add(size) as u64),
        use_,
        how: Certainty::Known,
    }
}

/// A kernel's memory arguments: read for a `CL_MEM_READ_ONLY` buffer, written for a
/// `CL_MEM_WRITE_ONLY` one; otherwise as judged (`objects::judge`): known where the source or
/// a qualifier shows it, declared where only the declaration says it may write, assumed where
/// nothing tells.
fn kernel_touches(kernel: cl_kernel) -> Touches {
    let memory = WORLD.memory.lock();
    kernel_args(kernel)
        .into_iter()
        .map(|(m, judged)| {
            let flags = memory.object(m).map_or(0, |o| o.flags);
            let (use_, how) = match (flags, judged) {
                (f, _) if f & CL_MEM_READ_ONLY != 0 => (Use::Read, Certainty::Known),
                (f, _) if f & CL_MEM_WRITE_ONLY != 0 => (Use::Write, Certainty::Known),
                (_, Access::Reads(_)) => (Use::Read, Certainty::Known),
                (_, Access::Writes(_)) => (Use::Write, Certainty::Known),
                (_, Access::MayWrite(_)) => (Use::Write, Certainty::Declared),
                (_, Access::NotMemory | Access::Unsure(_)) => (Use::Write, Certainty::Assumed),
            };
            Touch {
                object: m,
                range: (0, u64::MAX),
                use_,
                how,
            }
        })
        .collect()
}

/// `clEnqueueReadBuffer` (`TO_DEVICE == false`), `clEnqueueWriteBuffer`.
pub struct HostBuffer<const TO_DEVICE: bool>;
type HostBufferArgs<P> = (
    cl_command_queue,
    cl_mem,
    cl_bool,
    usize,
    usize,
    P,
    cl_uint,
    *const cl_event,
    *mut cl_event,
);
command!([P: Addr, const TO_DEVICE: bool] HostBuffer<TO_DEVICE>, HostBufferArgs<P>,
|a| blocking: a.2 != 0,
op: {
    let (mem, ptr, bytes) = (a.1 as usize, a.5.addr(), a.4 as u64);
    Some(Op::Host { mem, to_device: TO_DEVICE, ptr, bytes, span: bytes, rect: false })
},
touches: {
    let use_ = if TO_DEVICE { Use::Write } else { Use::Read };
    Touches::from_buf_and_len([touch(a.1, a.3, a.4, use_); 2], 1)
},
sample: Sample::Bytes(a.4 as u64));

/// `clEnqueueReadBufferRect`, `clEnqueueWriteBufferRect`.
pub struct HostRect<const TO_DEVICE: bool>;
type HostRectArgs<P> = (
    cl_command_queue,
    cl_mem,
    cl_bool,
    *const usize,
    *const usize,
    *const usize,
    usize,
    usize,
    usize,
    usize,
    P,
    cl_uint,
    *const cl_event,
    *mut cl_event,
);
command!([P: Addr, const TO_DEVICE: bool] HostRect<TO_DEVICE>, HostRectArgs<P>,
|a| blocking: a.2 != 0,
op: {
    let (origin, region) = (triple(a.4), triple(a.5));
    let (row_pitch, slice_pitch) = (a.8, a.9);
    let e = Region { origin, region, row_pitch, slice_pitch, element_size: 1 }.extent();
    let ptr = a.10.addr().wrapping_add(e.offset as usize);
    let (mem, bytes, span) = (a.1 as usize, e.bytes, e.span);
    Some(Op::Host { mem, to_device: TO_DEVICE, ptr, bytes, span, rect: true })
});

/// `clEnqueueReadImage`, `clEnqueueWriteImage`.
pub struct HostImage<const TO_DEVICE: bool>;
type HostImageArgs<P> = (
    cl_command_queue,
    cl_mem,
    cl_bool,
    *const usize,
    *const usize,
    usize,
    usize,
    P,
    cl_uint,
    *const cl_event,
    *mut cl_event,
);
command!([P: Addr, const TO_DEVICE: bool] HostImage<TO_DEVICE>, HostImageArgs<P>,
|a| blocking: a.2 != 0,
op: {
    let (region, element_size) = (triple(a.4), element_size(a.1));
    let (row_pitch, slice_pitch) = (a.5, a.6);
    let e = Region { origin: [0; 3], region, row_pitch, slice_pitch, element_size }.extent();
    let (mem, ptr, bytes, span) = (a.1 as usize, a.7.addr(), e.bytes, e.span);
    Some(Op::Host { mem, to_device: TO_DEVICE, ptr, bytes, span, rect: span != bytes })
});

pub struct CopyBuffer;
command!(CopyBuffer, (cl_command_queue, cl_mem, cl_mem, usize, usize, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Copy { src: a.1 as usize, dst: a.2 as usize, bytes: a.5 as u64 }),
    touches: Touches::from_buf([touch(a.1, a.3, a.5, Use::Read), touch(a.2, a.4, a.5, Use::Write)]),
    sample: Sample::Bytes(a.5 as u64));

pub struct CopyBufferRect;
command!(CopyBufferRect, (
        cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, *const usize,
        usize, usize, usize, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false,
    op: Some(Op::Copy { src: a.1 as usize, dst: a.2 as usize, bytes: region_bytes(std::ptr::null_mut(), a.5) }));

pub struct CopyImage;
command!(CopyImage, (cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, *const usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false,
    op: Some(Op::Copy { src: a.1 as usize, dst: a.2 as usize, bytes: region_bytes(a.1, a.5) }));

pub struct CopyImageToBuffer;
command!(CopyImageToBuffer, (cl_command_queue, cl_mem, cl_mem, *const usize, *const usize, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false,
    op: Some(Op::Copy { src: a.1 as usize, dst: a.2 as usize, bytes: region_bytes(a.1, a.4) }));

pub struct CopyBufferToImage;
command!(CopyBufferToImage, (cl_command_queue, cl_mem, cl_mem, usize, *const usize, *const usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false,
    op: Some(Op::Copy { src: a.1 as usize, dst: a.2 as usize, bytes: region_bytes(a.2, a.5) }));

pub struct FillBuffer;
command!(FillBuffer, (cl_command_queue, cl_mem, *const c_void, usize, usize, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Fill { mem: a.1 as usize, bytes: a.5 as u64 }),
    touches: Touches::from_buf_and_len([touch(a.1, a.4, a.5, Use::Write); 2], 1),
    sample: Sample::Bytes(a.5 as u64));

pub struct FillImage;
command!(FillImage, (cl_command_queue, cl_mem, *const c_void, *const usize, *const usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Fill { mem: a.1 as usize, bytes: region_bytes(a.1, a.4) }));

pub struct Unmap;
command!(Unmap, (cl_command_queue, cl_mem, *mut c_void, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Unmap { mem: a.1 as usize, ptr: a.2 as usize }),
    sample: mapped(a.1 as usize, a.2 as usize));

pub struct Migrate;
command!(Migrate, (cl_command_queue, cl_uint, *const cl_mem, cl_mem_migration_flags, cl_uint, *const cl_event, *mut cl_event),
|a| blocking: false,
op: {
    let mems = if a.2.is_null() { &[][..] } else { std::slice::from_raw_parts(a.2, a.1 as usize) };
    Some(Op::Migrate { mems: mems.iter().map(|&m| m as usize).collect(), flags: a.3 })
},
touches: {
    // A migration reads what it moves; one whose contents are undefined may overwrite them.
    let mems = if a.2.is_null() { &[][..] } else { std::slice::from_raw_parts(a.2, a.1 as usize) };
    let undefined = a.3 & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0;
    let use_ = if undefined { Use::Write } else { Use::Read };
    mems.iter().map(|&m| touch(m, 0, usize::MAX, use_)).collect()
});

/// `clEnqueueSVMMemcpy`, `clEnqueueSVMMemcpyARM`, `clEnqueueMemcpyINTEL`.
pub struct PtrCopy;
command!(PtrCopy, (cl_command_queue, cl_bool, *mut c_void, *const c_void, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: a.1 != 0,
    op: Some(Op::PtrCopy { dst: a.2 as usize, src: a.3 as usize, bytes: a.4 as u64 }),
    sample: Sample::Bytes(a.4 as u64));

/// `clEnqueueSVMMemFill`, `clEnqueueSVMMemFillARM`, `clEnqueueMemFillINTEL`.
pub struct PtrFill;
command!(PtrFill, (cl_command_queue, *mut c_void, *const c_void, usize, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::PtrFill { ptr: a.1 as usize, bytes: a.4 as u64 }),
    sample: Sample::Bytes(a.4 as u64));

/// `clEnqueueMemsetINTEL`.
pub struct Memset;
command!(Memset, (cl_command_queue, *mut c_void, cl_int, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::PtrFill { ptr: a.1 as usize, bytes: a.3 as u64 }),
    sample: Sample::Bytes(a.3 as u64));

/// `clEnqueueSVMMap`, `clEnqueueSVMMapARM`.
pub struct SvmMap;
command!(SvmMap, (cl_command_queue, cl_bool, cl_map_flags, *mut c_void, usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: a.1 != 0,
    op: Some(Op::PtrMap { ptr: a.3 as usize, flags: a.2, bytes: a.4 as u64 }),
    sample: Sample::Bytes(a.4 as u64));

/// `clEnqueueSVMUnmap`, `clEnqueueSVMUnmapARM`.
pub struct SvmUnmap;
command!(SvmUnmap, (cl_command_queue, *mut c_void, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::PtrUnmap { ptr: a.1 as usize }),
    sample: mapped(crate::model::classify::SVM_MAPPINGS, a.1 as usize));

/// `clEnqueueSVMMigrateMem`: a size of 0 (or no sizes) means the whole allocation.
pub struct SvmMigrate;
command!(SvmMigrate, (cl_command_queue, cl_uint, *mut *const c_void, *const usize, cl_mem_migration_flags, cl_uint, *const cl_event, *mut cl_event),
|a| blocking: false,
op: {
    let n = a.1 as usize;
    let ptrs = if a.2.is_null() { &[][..] } else { std::slice::from_raw_parts(a.2, n) };
    let sizes = if a.3.is_null() { &[][..] } else { std::slice::from_raw_parts(a.3, n) };
    let memory = WORLD.memory.lock();
    let ptrs = ptrs.iter().enumerate().map(|(i, &p)| {
        let size = sizes.get(i).copied().unwrap_or(0) as u64;
        let whole = || memory.host_range(p as usize, 1).map_or(0, |h| h.range.len - h.offset);
        (p as usize, if size == 0 { whole() } else { size })
    }).collect();
    Some(Op::PtrMigrate { ptrs, flags: a.4 })
});

/// `clEnqueueMigrateMemINTEL`.
pub struct UsmMigrate;
command!(UsmMigrate, (cl_command_queue, *const c_void, usize, cl_mem_migration_flags, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false,
    op: Some(Op::PtrMigrate { ptrs: vec![(a.1 as usize, a.2 as u64)], flags: a.3 }),
    sample: Sample::Bytes(a.2 as u64));

/// `clEnqueueNDRangeKernel`, `clEnqueueTask`, `clEnqueueNativeKernel`: buffers follow the kernel.
/// The first two name their arguments once, as touches; the op's objects and which of them it
/// only reads are filled from those (`Enqueue::after`).
pub struct Kernel;
command!(Kernel, (cl_command_queue, cl_kernel, cl_uint, *const usize, *const usize, *const usize, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Kernel { mems: Vec::new(), reads: 0 }), kernel: a.1,
    touches: kernel_touches(a.1), sample: Sample::Kernel);
command!(Kernel, (cl_command_queue, cl_kernel, cl_uint, *const cl_event, *mut cl_event),
    |a| blocking: false, op: Some(Op::Kernel { mems: Vec::new(), reads: 0 }), kernel: a.1,
    touches: kernel_touches(a.1), sample: Sample::Kernel);
type NativeArgs = (
    cl_command_queue,
    Option<unsafe extern "C" fn(*mut c_void)>,
    *mut c_void,
    usize,
    cl_uint,
    *const cl_mem,
    *mut *const c_void,
    cl_uint,
    *const cl_event,
    *mut cl_event,
);
command!(Kernel, NativeArgs, |a| blocking: false,
op: {
    let mems = if a.5.is_null() { &[][..] } else { std::slice::from_raw_parts(a.5, a.4 as usize) };
    Some(Op::Kernel { mems: mems.iter().map(|&m| m as usize).collect(), reads: 0 })
},
sample: Sample::Kernel);
