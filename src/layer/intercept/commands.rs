//! What each transfer-like enqueue does, read from its arguments (arrays only after the driver
//! accepted them). One `Command` per shape; SVM, ARM SVM and USM calls of one shape share it.

use super::enqueue::Command;
use super::objects::kernel_args;
use super::races::{Touch, Touches};
use super::state::WORLD;
use crate::graph::race::{Certainty, Use};
use crate::layer::args::{self, Blocking};
use crate::model::classify::Op;
use crate::model::geometry::{Extent, Region};
use crate::model::kernel_source::Access;
use crate::timing::sample::Sample;
use opencl_sys::*;

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

/// What a `region` of `mem`'s elements, laid out with `row_pitch` and `slice_pitch` (0: packed),
/// holds and spans.
///
/// # Safety
/// `region` is null or points to three readable `size_t`s.
pub(super) unsafe fn image_extent(
    mem: cl_mem,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
) -> Extent {
    Region {
        origin: [0; 3],
        region: unsafe { triple(region) },
        row_pitch,
        slice_pitch,
        element_size: element_size(mem),
    }
    .extent()
}

/// The bytes a `region` of `mem`'s elements holds.
unsafe fn region_bytes(mem: cl_mem, region: *const usize) -> u64 {
    unsafe { image_extent(mem, region, 0, 0) }.bytes
}

/// An unmap, to the sampler: the size of the mapping it ends (unknown: timed).
fn mapped(handle: usize, ptr: usize) -> Sample {
    match WORLD.memory.lock().mapping(handle, ptr) {
        Some(m) => Sample::Bytes(m.len),
        None => Sample::Always,
    }
}

/// The `Command` impls of one shape, for each argument struct listed (`[generics]` first when
/// the impl needs them): one body serves entry points that name their parameters alike.
macro_rules! command {
    (@each [$($gen:tt)*] $name:ty, [], $($body:tt)*) => {};
    (@each [$($gen:tt)*] $name:ty, [$args:ident $(, $more:ident)*], $($body:tt)*) => {
        command!(@one [$($gen)*] $name, $args, $($body)*);
        command!(@each [$($gen)*] $name, [$($more),*], $($body)*);
    };
    (@one [$($gen:tt)*] $name:ty, $args:ident,
        |$a:ident| blocking: $blocking:expr, op: $op:expr $(, kernel: $kernel:expr)?
        $(, touches: $touches:expr)? $(, sample: $sample:expr)?) => {
        impl<$($gen)*> Command<args::$args> for $name {
            fn blocking($a: &args::$args) -> bool {
                let _ = $a;
                $blocking
            }
            unsafe fn op($a: &args::$args) -> Option<Op> {
                let _ = $a;
                #[allow(unused_unsafe)]
                unsafe {
                    $op
                }
            }
            $(fn kernel($a: &args::$args) -> Option<cl_kernel> {
                Some($kernel)
            })?
            $(unsafe fn touches($a: &args::$args) -> Touches {
                #[allow(unused_unsafe)]
                unsafe {
                    $touches
                }
            })?
            $(fn sample($a: &args::$args) -> Sample {
                let _ = $a;
                $sample
            })?
        }
    };
    ([$($gen:tt)*] $name:ty, $($args:ident)|+, $($body:tt)*) => {
        command!(@each [$($gen)*] $name, [$($args),+], $($body)*);
    };
    ($name:ty, $($args:ident)|+, $($body:tt)*) => {
        command!(@each [] $name, [$($args),+], $($body)*);
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
command!([const TO_DEVICE: bool] HostBuffer<TO_DEVICE>, clEnqueueReadBuffer | clEnqueueWriteBuffer,
|a| blocking: a.blocking(),
op: {
    let (mem, ptr, bytes) = (a.buffer as usize, a.ptr.addr(), a.size as u64);
    Some(Op::Host { mem, to_device: TO_DEVICE, ptr, bytes, span: bytes, rect: false })
},
touches: {
    let use_ = if TO_DEVICE { Use::Write } else { Use::Read };
    Touches::from_buf_and_len([touch(a.buffer, a.offset, a.size, use_); 2], 1)
},
sample: Sample::Bytes(a.size as u64));

/// `clEnqueueReadBufferRect`, `clEnqueueWriteBufferRect`.
pub struct HostRect<const TO_DEVICE: bool>;
command!([const TO_DEVICE: bool] HostRect<TO_DEVICE>, clEnqueueReadBufferRect | clEnqueueWriteBufferRect,
|a| blocking: a.blocking(),
op: {
    let (origin, region) = (triple(a.host_origin), triple(a.region));
    let (row_pitch, slice_pitch) = (a.host_row_pitch, a.host_slice_pitch);
    let e = Region { origin, region, row_pitch, slice_pitch, element_size: 1 }.extent();
    let ptr = a.ptr.addr().wrapping_add(e.offset as usize);
    let (mem, bytes, span) = (a.buffer as usize, e.bytes, e.span);
    Some(Op::Host { mem, to_device: TO_DEVICE, ptr, bytes, span, rect: true })
});

/// `clEnqueueReadImage`, `clEnqueueWriteImage` (whose host pitches are `input_*`).
pub struct HostImage<const TO_DEVICE: bool>;
command!([const TO_DEVICE: bool] HostImage<TO_DEVICE>, clEnqueueReadImage,
    |a| blocking: a.blocking(),
    op: host_image(TO_DEVICE, a.image, a.region, a.row_pitch, a.slice_pitch, a.ptr.addr()));
command!([const TO_DEVICE: bool] HostImage<TO_DEVICE>, clEnqueueWriteImage,
    |a| blocking: a.blocking(),
    op: host_image(TO_DEVICE, a.image, a.region, a.input_row_pitch, a.input_slice_pitch, a.ptr.addr()));

/// What a read or write of `region` of `image` from or to host memory at `ptr`, laid out with
/// `row_pitch` and `slice_pitch`, moves.
///
/// # Safety
/// `region` points to three `size_t`s the driver accepted.
unsafe fn host_image(
    to_device: bool,
    image: cl_mem,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: usize,
) -> Option<Op> {
    let e = unsafe { image_extent(image, region, row_pitch, slice_pitch) };
    let (mem, bytes, span) = (image as usize, e.bytes, e.span);
    Some(Op::Host {
        mem,
        to_device,
        ptr,
        bytes,
        span,
        rect: span != bytes,
    })
}

pub struct CopyBuffer;
command!(CopyBuffer, clEnqueueCopyBuffer,
    |a| blocking: false, op: Some(Op::Copy { src: a.src_buffer as usize, dst: a.dst_buffer as usize, bytes: a.size as u64 }),
    touches: Touches::from_buf([
        touch(a.src_buffer, a.src_offset, a.size, Use::Read),
        touch(a.dst_buffer, a.dst_offset, a.size, Use::Write),
    ]),
    sample: Sample::Bytes(a.size as u64));

pub struct CopyBufferRect;
command!(CopyBufferRect, clEnqueueCopyBufferRect,
    |a| blocking: false,
    op: Some(Op::Copy { src: a.src_buffer as usize, dst: a.dst_buffer as usize, bytes: region_bytes(std::ptr::null_mut(), a.region) }));

pub struct CopyImage;
command!(CopyImage, clEnqueueCopyImage,
    |a| blocking: false,
    op: Some(Op::Copy { src: a.src_image as usize, dst: a.dst_image as usize, bytes: region_bytes(a.src_image, a.region) }));

pub struct CopyImageToBuffer;
command!(CopyImageToBuffer, clEnqueueCopyImageToBuffer,
    |a| blocking: false,
    op: Some(Op::Copy { src: a.src_image as usize, dst: a.dst_buffer as usize, bytes: region_bytes(a.src_image, a.region) }));

pub struct CopyBufferToImage;
command!(CopyBufferToImage, clEnqueueCopyBufferToImage,
    |a| blocking: false,
    op: Some(Op::Copy { src: a.src_buffer as usize, dst: a.dst_image as usize, bytes: region_bytes(a.dst_image, a.region) }));

pub struct FillBuffer;
command!(FillBuffer, clEnqueueFillBuffer,
    |a| blocking: false, op: Some(Op::Fill { mem: a.buffer as usize, bytes: a.size as u64 }),
    touches: Touches::from_buf_and_len([touch(a.buffer, a.offset, a.size, Use::Write); 2], 1),
    sample: Sample::Bytes(a.size as u64));

pub struct FillImage;
command!(FillImage, clEnqueueFillImage,
    |a| blocking: false, op: Some(Op::Fill { mem: a.image as usize, bytes: region_bytes(a.image, a.region) }));

pub struct Unmap;
command!(Unmap, clEnqueueUnmapMemObject,
    |a| blocking: false, op: Some(Op::Unmap { mem: a.memobj as usize, ptr: a.mapped_ptr as usize }),
    sample: mapped(a.memobj as usize, a.mapped_ptr as usize));

/// The `n` handles at `list` (none where it is NULL).
///
/// # Safety
/// The driver accepted `n` handles at `list`.
unsafe fn handles<'a, T>(n: cl_uint, list: *const T) -> &'a [T] {
    if list.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(list, n as usize) }
    }
}

pub struct Migrate;
command!(Migrate, clEnqueueMigrateMemObjects,
|a| blocking: false,
op: {
    let mems = handles(a.num_mem_objects, a.mem_objects);
    Some(Op::Migrate { mems: mems.iter().map(|&m| m as usize).collect(), flags: a.flags })
},
touches: {
    // A migration reads what it moves; one whose contents are undefined may overwrite them.
    let mems = handles(a.num_mem_objects, a.mem_objects);
    let undefined = a.flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0;
    let use_ = if undefined { Use::Write } else { Use::Read };
    mems.iter().map(|&m| touch(m, 0, usize::MAX, use_)).collect()
});

/// `clEnqueueSVMMemcpy`, `clEnqueueSVMMemcpyARM`, `clEnqueueMemcpyINTEL`.
pub struct PtrCopy;
command!(PtrCopy, clEnqueueSVMMemcpy | clEnqueueSVMMemcpyARM | clEnqueueMemcpyINTEL,
    |a| blocking: a.blocking(),
    op: Some(Op::PtrCopy { dst: a.dst_ptr as usize, src: a.src_ptr as usize, bytes: a.size as u64 }),
    sample: Sample::Bytes(a.size as u64));

/// `clEnqueueSVMMemFill`, `clEnqueueSVMMemFillARM`, `clEnqueueMemFillINTEL` (whose pointer is
/// `dst_ptr`).
pub struct PtrFill;
command!(PtrFill, clEnqueueSVMMemFill | clEnqueueSVMMemFillARM,
    |a| blocking: false, op: Some(Op::PtrFill { ptr: a.svm_ptr as usize, bytes: a.size as u64 }),
    sample: Sample::Bytes(a.size as u64));
command!(PtrFill, clEnqueueMemFillINTEL,
    |a| blocking: false, op: Some(Op::PtrFill { ptr: a.dst_ptr as usize, bytes: a.size as u64 }),
    sample: Sample::Bytes(a.size as u64));

/// `clEnqueueMemsetINTEL`.
pub struct Memset;
command!(Memset, clEnqueueMemsetINTEL,
    |a| blocking: false, op: Some(Op::PtrFill { ptr: a.dst_ptr as usize, bytes: a.size as u64 }),
    sample: Sample::Bytes(a.size as u64));

/// `clEnqueueSVMMap`, `clEnqueueSVMMapARM`.
pub struct SvmMap;
command!(SvmMap, clEnqueueSVMMap | clEnqueueSVMMapARM,
    |a| blocking: a.blocking(),
    op: Some(Op::PtrMap { ptr: a.svm_ptr as usize, flags: a.flags, bytes: a.size as u64 }),
    sample: Sample::Bytes(a.size as u64));

/// `clEnqueueSVMUnmap`, `clEnqueueSVMUnmapARM`.
pub struct SvmUnmap;
command!(SvmUnmap, clEnqueueSVMUnmap | clEnqueueSVMUnmapARM,
    |a| blocking: false, op: Some(Op::PtrUnmap { ptr: a.svm_ptr as usize }),
    sample: mapped(crate::model::classify::SVM_MAPPINGS, a.svm_ptr as usize));

/// `clEnqueueSVMMigrateMem`: a size of 0 (or no sizes) means the whole allocation.
pub struct SvmMigrate;
command!(SvmMigrate, clEnqueueSVMMigrateMem,
|a| blocking: false,
op: {
    let ptrs = handles(a.num_svm_pointers, a.svm_pointers);
    let sizes = handles(a.num_svm_pointers, a.sizes);
    let memory = WORLD.memory.lock();
    let ptrs = ptrs.iter().enumerate().map(|(i, &p)| {
        let size = sizes.get(i).copied().unwrap_or(0) as u64;
        let whole = || memory.host_range(p as usize, 1).map_or(0, |h| h.range.len - h.offset);
        (p as usize, if size == 0 { whole() } else { size })
    }).collect();
    Some(Op::PtrMigrate { ptrs, flags: a.flags })
});

/// `clEnqueueMigrateMemINTEL`.
pub struct UsmMigrate;
command!(UsmMigrate, clEnqueueMigrateMemINTEL,
    |a| blocking: false,
    op: Some(Op::PtrMigrate { ptrs: vec![(a.ptr as usize, a.size as u64)], flags: a.flags }),
    sample: Sample::Bytes(a.size as u64));

/// `clEnqueueNDRangeKernel`, `clEnqueueTask`, `clEnqueueNativeKernel`: buffers follow the kernel.
/// The first two name their arguments once, as touches; the op's objects and which of them it
/// only reads are filled from those (`Enqueue::after`).
pub struct Kernel;
command!(Kernel, clEnqueueNDRangeKernel | clEnqueueTask,
    |a| blocking: false, op: Some(Op::Kernel { mems: Vec::new(), reads: 0 }), kernel: a.kernel,
    touches: kernel_touches(a.kernel), sample: Sample::Kernel);
command!(Kernel, clEnqueueNativeKernel, |a| blocking: false,
op: {
    let mems = handles(a.num_mem_objects, a.mem_list);
    Some(Op::Kernel { mems: mems.iter().map(|&m| m as usize).collect(), reads: 0 })
},
sample: Sample::Kernel);
