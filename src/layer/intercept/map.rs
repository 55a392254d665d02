//! `clEnqueueMapBuffer` and `clEnqueueMapImage`: they return the mapped pointer (the start of a
//! pinned range until unmap) and report errors through `errcode_ret`.

use super::commands::{element_size, touch, triple};
use super::enqueue::{enqueued, refused};
use super::events::{Capture, capture};
use super::races::Touch;
use crate::graph::race::Use;
use crate::layer::{Call, Hook, Span};
use crate::model::classify::Op;
use crate::model::geometry::Region;
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

type MapBufferArgs = (
    cl_command_queue,
    cl_mem,
    cl_bool,
    cl_map_flags,
    usize,
    usize,
    cl_uint,
    *const cl_event,
    *mut cl_event,
    *mut cl_int,
);

impl Hook<MapBufferArgs, *mut c_void> for MapBuffer {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, a: &mut MapBufferArgs) -> (Call, Capture) {
        (call, capture(&mut a.8, a.0, Sample::Bytes(a.5 as u64)))
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        a: &MapBufferArgs,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        super::events::settle(&cap, a.0);
        let (queue, blocking) = (a.0 as usize, a.2 != 0);
        if ret.is_null() {
            refused(call, queue, blocking, unsafe { error_of(a.9) });
        } else {
            let op = Op::Map {
                mem: a.1 as usize,
                flags: a.3,
                bytes: a.5 as u64,
                ptr: ret as usize,
            };
            unsafe {
                enqueued(
                    call,
                    cap,
                    a.0,
                    (a.8, (a.6, a.7)),
                    span,
                    (Some((blocking, op)), &[map_touch(a.1, a.3, a.4, a.5)]),
                    None,
                )
            };
            if let Some(e) = span.command.as_mut() {
                e.region = Some((a.4 as u64, a.5 as u64));
            }
        }
        ret
    }
}

pub struct MapImage;

type MapImageArgs = (
    cl_command_queue,
    cl_mem,
    cl_bool,
    cl_map_flags,
    *const usize,
    *const usize,
    *mut usize,
    *mut usize,
    cl_uint,
    *const cl_event,
    *mut cl_event,
    *mut cl_int,
);

impl Hook<MapImageArgs, *mut c_void> for MapImage {
    type State = (Call, Capture);
    const ENQUEUES: bool = true;
    unsafe fn before(call: Call, a: &mut MapImageArgs) -> (Call, Capture) {
        (call, capture(&mut a.10, a.0, Sample::Always))
    }
    unsafe fn after(
        (call, cap): (Call, Capture),
        a: &MapImageArgs,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        super::events::settle(&cap, a.0);
        let (queue, blocking) = (a.0 as usize, a.2 != 0);
        if ret.is_null() {
            refused(call, queue, blocking, unsafe { error_of(a.11) });
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
        let (row_pitch, slice_pitch) = (read(a.6), read(a.7));
        let (region, element_size) = (unsafe { triple(a.5) }, element_size(a.1));
        let e = Region {
            origin: [0; 3],
            region,
            row_pitch,
            slice_pitch,
            element_size,
        }
        .extent();
        let op = Op::Map {
            mem: a.1 as usize,
            flags: a.3,
            bytes: e.span,
            ptr: ret as usize,
        };
        unsafe {
            enqueued(
                call,
                cap,
                a.0,
                (a.10, (a.8, a.9)),
                span,
                (Some((blocking, op)), &[]),
                None,
            )
        };
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
