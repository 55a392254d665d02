//! Queue creation: clxfer turns on `CL_QUEUE_PROFILING_ENABLE` in a copy of the program's
//! properties (both creation calls), so every command can be timed on the device. If the driver
//! refuses the edited properties, the program's own are tried and the queue is marked untimed.
//! The program's own properties are kept ([`Asked`]): its queries are answered from them
//! (`hidden.rs`), so it never sees the profiling clxfer turned on.

use super::devices::device;
use super::state::{Asked, QueueInfo, WORLD, bounded_insert};
use crate::config::DeviceTiming;
use crate::layer::{Call, Hook, Span, args, driver};
use crate::sink::buffer;
use crate::sink::record::{QueueRef, QueueTrack, Record, Timing};
use crate::sync::Mutex;
use opencl_sys::*;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Every thread's cached lookup looks again (the map's entries were replaced).
pub(super) fn forget_cached() {
    GENERATION.fetch_add(1, Ordering::Release);
}

static NEXT_QUEUE: AtomicU32 = AtomicU32::new(1);

/// Bumped after every change to the queue map, so that a thread's cached lookup looks again.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's last queue (handle, generation, info): a program enqueues on few queues per
    /// thread, and the map's read lock is a line every enqueuing thread writes.
    static LAST: RefCell<Option<(usize, u64, Arc<QueueInfo>)>> = const { RefCell::new(None) };
}

/// Records a queue: numbers it, names its track.
fn add(
    queue: usize,
    device_handle: usize,
    props: cl_command_queue_properties,
    timing: Timing,
    asked: Asked,
) -> Option<Arc<QueueInfo>> {
    let dev = device(device_handle)?;
    let r = QueueRef {
        device: dev.profile.index,
        queue: NEXT_QUEUE.fetch_add(1, Ordering::Relaxed),
    };
    let info = Arc::new(QueueInfo {
        device: dev,
        device_handle,
        r,
        timing,
        in_order: props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0,
        asked,
        waiting: Mutex::default(),
        collected: std::sync::Condvar::new(),
        order: crate::graph::order::Shared::new(
            props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0,
        ),
        toggling: Default::default(),
        sampled: Default::default(),
    });
    bounded_insert(&mut WORLD.queues.write(), queue, info.clone());
    GENERATION.fetch_add(1, Ordering::Release);
    buffer::push_with(|_| {
        Record::Queue(QueueTrack {
            queue: r,
            out_of_order: !info.in_order,
            timing,
        })
    });
    Some(info)
}

/// The queue's info; a queue clxfer did not see created is asked about (it was accepted).
pub(super) fn info(queue: usize) -> Option<Arc<QueueInfo>> {
    if let Some(info) = cached(queue) {
        return Some(info);
    }
    // SAFETY: the driver accepted a call on this queue.
    let (device, props) = unsafe { driver::queue_info(queue as cl_command_queue) }?;
    let timing = if props & CL_QUEUE_PROFILING_ENABLE != 0 {
        Timing::Program
    } else {
        Timing::Untimed
    };
    add(queue, device, props, timing, Asked::default())
}

/// The queue's info, if clxfer knows the queue; the driver is not asked (before a call, the
/// handle may be invalid).
#[inline]
pub(super) fn cached(queue: usize) -> Option<Arc<QueueInfo>> {
    let generation = GENERATION.load(Ordering::Acquire);
    let cached = LAST.try_with(|last| match &*last.try_borrow().ok()? {
        Some((q, g, info)) if *q == queue && *g == generation => Some(info.clone()),
        _ => None,
    });
    if let Ok(Some(info)) = cached {
        return Some(info);
    }
    let known = WORLD.queues.read().get(&queue).cloned();
    if let Some(info) = &known {
        let _ = LAST.try_with(|last| {
            if let Ok(mut last) = last.try_borrow_mut() {
                *last = Some((queue, generation, info.clone()));
            }
        });
    }
    known
}

/// Every queue clxfer knows.
pub(super) fn all() -> Vec<Arc<QueueInfo>> {
    WORLD.queues.read().values().cloned().collect()
}

/// The queue's info if clxfer knows it, without asking the driver (the queue may be invalid).
pub(super) fn known(queue: usize) -> Option<Arc<QueueInfo>> {
    WORLD.queues.read().get(&queue).cloned()
}

/// What clxfer did to a queue's properties.
pub struct Edit {
    /// The program's own properties.
    asked: Asked,
    forced: bool,
    retried: bool,
    /// The edited copy of a properties array; the driver reads it during the call.
    _array: Option<Vec<cl_queue_properties>>,
}

impl Edit {
    /// `asked`: the program's own; `array`: the edited copy handed to the driver, if any.
    fn new(asked: Asked, forced: bool, array: Option<Vec<cl_queue_properties>>) -> Edit {
        Edit {
            asked,
            forced,
            retried: false,
            _array: array,
        }
    }

    /// Both creation calls: the driver refused the edited properties, so ask again with the
    /// program's own (the queue is then untimed).
    fn retry(&mut self, ret: cl_command_queue) -> bool {
        self.retried = self.forced && ret.is_null();
        self.retried
    }

    fn timing(&self) -> Timing {
        if self.asked.props & CL_QUEUE_PROFILING_ENABLE != 0 {
            Timing::Program
        } else if self.forced && !self.retried {
            Timing::Forced
        } else {
            Timing::Untimed
        }
    }

    fn created(self, ret: cl_command_queue, device: cl_device_id) {
        if !ret.is_null() {
            let mut timing = self.timing();
            // Where profiling costs every command, sampled timing turns it on only around the
            // commands it times (`events::capture`): off again from the start.
            let sampled = crate::config::global().device_timing == DeviceTiming::Sampled;
            if timing == Timing::Forced
                && sampled
                && super::devices::device(device as usize).is_some_and(|d| d.rules.toggle_profiling)
                // SAFETY: the driver has just made this queue.
                && unsafe { driver::set_profiling(ret, false) }
            {
                timing = Timing::Toggled;
            }
            let props = self.asked.props
                | if timing == Timing::Forced {
                    CL_QUEUE_PROFILING_ENABLE
                } else {
                    0
                };
            add(ret as usize, device as usize, props, timing, self.asked);
        }
    }
}

fn timing_on() -> bool {
    crate::config::global().device_timing.on()
}

pub struct QueueCreated;

/// `clCreateCommandQueue`: the properties are a bitfield.
impl Hook<args::clCreateCommandQueue, cl_command_queue> for QueueCreated {
    type State = Edit;
    unsafe fn before(_: Call, args: &mut args::clCreateCommandQueue) -> Edit {
        let props = args.properties;
        let forced = timing_on() && props & CL_QUEUE_PROFILING_ENABLE == 0;
        if forced {
            args.properties |= CL_QUEUE_PROFILING_ENABLE;
        }
        let asked = Asked { props, array: None };
        Edit::new(asked, forced, None)
    }
    fn retry(edit: &mut Edit, ret: &cl_command_queue) -> bool {
        edit.retry(*ret)
    }
    unsafe fn after(
        edit: Edit,
        args: &args::clCreateCommandQueue,
        ret: cl_command_queue,
        _: &mut Span,
    ) -> cl_command_queue {
        edit.created(ret, args.device);
        ret
    }
}

/// The longest properties list clxfer edits (pairs); longer lists are passed on untouched.
const MAX_PAIRS: usize = 64;

/// The queue properties clxfer knows (core and extensions): a driver reads a list pair by pair
/// and stops at the first name it does not know (`CL_INVALID_VALUE`), so clxfer reads a value
/// only after a name in this list, and never further than the driver will.
const KNOWN: [cl_queue_properties; 11] = [
    CL_QUEUE_PROPERTIES as cl_queue_properties,
    CL_QUEUE_SIZE as cl_queue_properties,
    0x1096, // CL_QUEUE_PRIORITY_KHR
    0x1097, // CL_QUEUE_THROTTLE_KHR
    0x418C, // CL_QUEUE_FAMILY_INTEL
    0x418D, // CL_QUEUE_INDEX_INTEL
    0x425E, // CL_QUEUE_MDAPI_PROPERTIES_INTEL
    0x425F, // CL_QUEUE_MDAPI_CONFIGURATION_INTEL
    0x41E1, // CL_QUEUE_JOB_SLOT_ARM
    0x41E7, // CL_QUEUE_KERNEL_BATCHING_ARM
    0x41EC, // CL_QUEUE_DEFERRED_FLUSH_ARM
];

/// Reads a properties list as a driver would: `Some(pairs)` when it ends with a 0 within
/// [`MAX_PAIRS`] pairs of known names; `None` when it names a property clxfer does not know (the
/// driver decides; clxfer reads no further) or is longer.
///
/// # Safety
/// `list` is non-null and the program's list, which the driver is about to read.
unsafe fn read_list(list: *const cl_queue_properties) -> Option<Vec<cl_queue_properties>> {
    let mut pairs = Vec::new();
    for i in 0..MAX_PAIRS {
        let key = unsafe { list.add(2 * i).read() };
        if key == 0 {
            return Some(pairs);
        }
        if !KNOWN.contains(&key) {
            return None;
        }
        pairs.push(key);
        pairs.push(unsafe { list.add(2 * i + 1).read() });
    }
    None
}

/// `clCreateCommandQueueWithProperties`: a zero-terminated list of (name, value) pairs.
impl Hook<args::clCreateCommandQueueWithProperties, cl_command_queue> for QueueCreated {
    type State = Edit;
    unsafe fn before(_: Call, args: &mut args::clCreateCommandQueueWithProperties) -> Edit {
        let list = if args.properties.is_null() {
            Some(Vec::new())
        } else {
            unsafe { read_list(args.properties) }
        };
        let Some(mut list) = list else {
            // Not a list clxfer can read safely: the program's own, untouched (an untimed queue).
            return Edit::new(Asked::default(), false, None);
        };
        let at = list
            .chunks(2)
            .position(|p| p[0] == CL_QUEUE_PROPERTIES as cl_queue_properties);
        let props = at.map_or(0, |i| list[2 * i + 1]);
        let asked = Asked {
            props,
            array: (!args.properties.is_null()).then(|| list.iter().copied().chain([0]).collect()),
        };
        let forced = timing_on() && props & CL_QUEUE_PROFILING_ENABLE == 0;
        if !forced {
            return Edit::new(asked, forced, None);
        }
        match at {
            Some(i) => list[2 * i + 1] |= CL_QUEUE_PROFILING_ENABLE,
            None => list.extend([
                CL_QUEUE_PROPERTIES as cl_queue_properties,
                CL_QUEUE_PROFILING_ENABLE,
            ]),
        }
        list.push(0);
        args.properties = list.as_ptr();
        Edit::new(asked, forced, Some(list))
    }
    fn retry(edit: &mut Edit, ret: &cl_command_queue) -> bool {
        edit.retry(*ret)
    }
    unsafe fn after(
        mut edit: Edit,
        args: &args::clCreateCommandQueueWithProperties,
        ret: cl_command_queue,
        _: &mut Span,
    ) -> cl_command_queue {
        // An empty list that clxfer filled: answered as this driver answers an empty list.
        if !ret.is_null()
            && edit.timing() == Timing::Forced
            && edit.asked.array.as_deref() == Some(&[0])
            && unsafe { driver::empty_list_answer(args.context, args.device) } == Some(0)
        {
            edit.asked.array = None;
        }
        edit.created(ret, args.device);
        ret
    }
}
