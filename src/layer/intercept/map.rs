//! `clEnqueueMapBuffer` and `clEnqueueMapImage`: they return the mapped pointer (the start of a
//! pinned range until unmap) and report errors through `errcode_ret`.

use super::commands::{image_extent, touch};
use super::enqueue::{Accepted, enqueued, refused};
use super::events::{Capture, capture};
use super::races::Touch;
use crate::graph::race::Use;
use crate::layer::args::{self, Blocking};
use crate::layer::{Call, Hook, Span};
use crate::model::classify::Op;
use crate::timing::sample::Sample;
use opencl_sys::*;
use std::ffi::c_void;

/// The error the driver wrote, if the program gave somewhere to write it.
///
/// # Safety
/// `errcode_ret` is the program's out-parameter, which the driver has just written (or null).
unsafe fn error_of(errcode_ret: *mut cl_int) -> Option<cl_int> {
    (!errcode_ret.is_null()).then(|| unsafe { errcode_ret.read() })
}

pub struct MapBuffer;

impl Hook<args::clEnqueueMapBuffer, *mut c_void> for MapBuffer {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, a: &mut args::clEnqueueMapBuffer) -> (Call, Capture) {
        (
            call,
            capture(&mut a.event, a.command_queue, Sample::Bytes(a.size as u64)),
        )
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        a: &args::clEnqueueMapBuffer,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        super::events::settle(&cap, a.command_queue);
        let (queue, blocking) = (a.command_queue as usize, a.blocking());
        if ret.is_null() {
            refused(call, queue, blocking, unsafe { error_of(a.errcode_ret) });
        } else {
            let op = Op::Map {
                mem: a.buffer as usize,
                flags: a.map_flags,
                bytes: a.size as u64,
                ptr: ret as usize,
            };
            let accepted = Accepted {
                transfer: Some((blocking, op)),
                touches: &[map_touch(a.buffer, a.map_flags, a.offset, a.size)],
                ..Accepted::of(a)
            };
            unsafe { enqueued(call, cap, accepted, span) };
            if let Some(e) = span.command.as_mut() {
                e.region = Some((a.offset as u64, a.size as u64));
            }
        }
        ret
    }
}

pub struct MapImage;

impl Hook<args::clEnqueueMapImage, *mut c_void> for MapImage {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, a: &mut args::clEnqueueMapImage) -> (Call, Capture) {
        (call, capture(&mut a.event, a.command_queue, Sample::Always))
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        a: &args::clEnqueueMapImage,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        super::events::settle(&cap, a.command_queue);
        let (queue, blocking) = (a.command_queue as usize, a.blocking());
        if ret.is_null() {
            refused(call, queue, blocking, unsafe { error_of(a.errcode_ret) });
            return ret;
        }
        // The driver accepted the region and wrote the pitches.
        let read = |p: *const usize| {
            if p.is_null() {
                0
            } else {
                unsafe { p.read_unaligned() }
            }
        };
        let (row_pitch, slice_pitch) = (read(a.image_row_pitch), read(a.image_slice_pitch));
        let e = unsafe { image_extent(a.image, a.region, row_pitch, slice_pitch) };
        let op = Op::Map {
            mem: a.image as usize,
            flags: a.map_flags,
            bytes: e.span,
            ptr: ret as usize,
        };
        let accepted = Accepted {
            transfer: Some((blocking, op)),
            ..Accepted::of(a)
        };
        unsafe { enqueued(call, cap, accepted, span) };
        ret
    }
}

/// A buffer map's access, for the race check: the host may read what is mapped for reading and
/// overwrite what is mapped for writing, from the map until the unmap.
fn map_touch(mem: cl_mem, flags: cl_map_flags, offset: usize, size: usize) -> Touch {
    let writes = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
    touch(
        mem,
        offset,
        size,
        if writes { Use::Write } else { Use::Read },
    )
}
