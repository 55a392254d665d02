//! A timed command is over: its profiling times read, placed on the host clock
//! (`timing::mapping`) and handed to the writer, as a device record (trace) or with the report's
//! facts (summary mode); and the timing of clxfer's own driver calls, for the own-cost line.

use super::pending::{OVER, Pending};
use super::state::Device;
use super::state::QueueInfo;
use crate::layer::driver;
use crate::sink::buffer;
use crate::sink::counters;
use crate::sink::record::{Command, DeviceTime, Record};
use crate::timing::{clock, mapping};
use opencl_sys::*;
use std::cell::Cell;
use std::sync::atomic::Ordering;

/// One of clxfer's own driver calls for device timing (a profiling or status query, an event's
/// release, a callback armed), its time added to the device's measured share of the driver's
/// work (`OwnCounts::driver_ns`, the own-cost line's "measured"). Two clock reads, made only for
/// timed commands. A callback the driver runs at once, inside the arming call, counts as the
/// driver's.
#[inline]
pub(super) fn driver_call<T>(dev: &Device, call: impl FnOnce() -> T) -> T {
    let before = clock::now_ns();
    let out = call();
    let took = clock::now_ns().saturating_sub(before);
    dev.own.driver_ns.fetch_add(took, Ordering::Relaxed);
    out
}

/// The time, read from the clock once, and only if asked (most completions never need it).
#[derive(Default)]
pub(super) struct Now(Cell<u64>);

impl Now {
    pub(super) fn get(&self) -> u64 {
        if self.0.get() == 0 {
            self.0.set(clock::now_ns());
        }
        self.0.get()
    }
}

/// A command's status where [`OVER`] stands for it (over, its status not asked): a command with
/// profiling times completed (a failed one has none), else the driver is asked; any other status
/// as it is.
///
/// # Safety
/// `event` is a live event.
unsafe fn settled(dev: &Device, event: cl_event, status: cl_int, timed: bool) -> cl_int {
    match status {
        OVER if timed => CL_COMPLETE,
        OVER => driver_call(dev, || unsafe { driver::event_status(event) }).unwrap_or(CL_COMPLETE),
        s => s,
    }
}

/// What the driver said of a command's times: QUEUED, SUBMIT, START and END (trace mode, for
/// the commands [`phases`] picks), or START and END in the last two with zeros before them (the
/// rest, and summary mode); `None` where it gave none or was not asked.
pub(super) type Asked = Option<[u64; 4]>;

/// Whether times the vendor's driver does not really measure cover this command: they are not
/// used as if it did.
fn untrusted(dev: &Device, p: &Pending) -> bool {
    (dev.rules.borrowed_times).is_some_and(|r| r.value.cover(p.what.api.verb(), p.what.class))
}

/// A small command is asked QUEUED and SUBMIT once in this many, on average.
pub const PHASES_EVERY: u64 = 16;

/// Whether trace mode asks the driver QUEUED and SUBMIT of this command, not only START and END:
/// of a kernel, a transfer of [`ALWAYS_BYTES`] or more, and one other command in
/// [`PHASES_EVERY`], picked by a hash of its number (a sampler that times every 8th or 16th
/// command would otherwise meet every multiple of 16 or none). On NVIDIA with one thread the two
/// queries were 0.07 to 0.28 µs per enqueue in earlier visits, and the sample took 0.56 µs off
/// trace `all`'s median in the fifth (docs/PERFORMANCE.md); a sample tells what a storm's small
/// commands wait between queued, submitted and started. Decided from what does not change
/// between [`ask`] and [`finish`] (`finish` takes the kernel's name only after).
///
/// [`ALWAYS_BYTES`]: crate::timing::sample::ALWAYS_BYTES
pub(super) fn phases(p: &Pending) -> bool {
    // Fibonacci hashing: the top bits of the number times 2^64/φ are spread evenly.
    let hashed = p.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60;
    p.what.kernel.is_some()
        || p.what.bytes >= crate::timing::sample::ALWAYS_BYTES
        || hashed < 16 / PHASES_EVERY
}

/// Asks the driver the times [`finish`] needs of a command over with `status`. A collection asks
/// all its commands before it finishes or releases any: on NVIDIA, with four threads enqueuing,
/// queries interleaved with releases (which take the driver's lock for writing) cost ~2 µs more
/// per enqueue than the program's own events (docs/PERFORMANCE.md, "Where trace `all`
/// spends").
///
/// # Safety
/// `p.event` is a live event.
pub(super) unsafe fn ask(queue: &QueueInfo, p: &Pending, status: cl_int) -> Asked {
    let dev: &Device = &queue.device;
    if p.reported || !matches!(status, CL_COMPLETE | OVER) {
        return None;
    }
    let event = p.event as cl_event;
    // Summary mode: START, two queries rather than four (see `finish`), and none where the rules
    // do not trust the times; trace mode: the two as well, but for the commands `phases` picks.
    let summary = !crate::sink::recording().slices;
    if summary && untrusted(dev, p) {
        return None;
    }
    if summary || !phases(p) {
        return driver_call(dev, || unsafe {
            driver::profiling(
                event,
                [CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END],
            )
        })
        .map(|[start, end]| [0, 0, start, end]);
    }
    driver_call(dev, || unsafe {
        driver::profiling(
            event,
            [
                CL_PROFILING_COMMAND_QUEUED,
                CL_PROFILING_COMMAND_SUBMIT,
                CL_PROFILING_COMMAND_START,
                CL_PROFILING_COMMAND_END,
            ],
        )
    })
}

/// One command is over with `status`, its times `asked` ([`ask`]): hand its device record to
/// the writer (once; the caller releases the event).
pub(super) unsafe fn finish(
    queue: &QueueInfo,
    p: &mut Pending,
    status: cl_int,
    asked: Asked,
    now: &Now,
) {
    let event = p.event as cl_event;
    if std::mem::replace(&mut p.reported, true) {
        return;
    }
    let dev: &Device = &queue.device;
    let mut status = status;
    if !crate::sink::recording().slices {
        // Summary mode: the report needs the duration and the start on the host clock (for the
        // busy time, a blocking call's wait for the commands ahead of it, and the critical
        // path), and no device slice; the in-flight counter is the trace's. START, two queries
        // rather than four: the command started after its call began, a bound on the clock's
        // offset as QUEUED is (a looser one: `timing::mapping` converges on the first command
        // that starts at once).
        // `ask` asked only a command that completed and whose times the rules trust.
        let ran = asked
            .map(|[_, _, start, end]| [start, end])
            .filter(|&[start, end]| start != 0 && start < end)
            .map(|[start, end]| {
                let offset = dev.clock.place(p.host_begin, start);
                let host_start = mapping::to_host(start, offset);
                crate::report::Ran {
                    ns: end - start,
                    after_call_ns: host_start.saturating_sub(p.host_begin),
                    // On the monotonic clock: the writer makes it relative to the run's start.
                    start_ns: host_start,
                }
            });
        if ran.is_none() {
            dev.unavailable.fetch_add(1, Ordering::Relaxed);
        }
        // A command that failed moved nothing: the report counts it so, not as bytes moved.
        let failed = ran.is_none() && unsafe { settled(dev, event, status, false) } < 0;
        if failed {
            buffer::push_with(|_| Record::Failed(p.id));
        }
        if let Some(facts) = p.fact() {
            buffer::push_with(|_| Record::Fact(facts, ran));
        }
        return;
    }
    // `ask` asked only a command that completed.
    status = unsafe { settled(dev, event, status, asked.is_some()) };
    counters::in_flight_add(-(p.what.bytes as i64), || now.get());
    let (phases, start, end, time) = match asked {
        Some(_) if untrusted(dev, p) => {
            let t = now.get().max(p.host_end);
            (None, t, t, DeviceTime::Untrusted)
        }
        Some([q, s, st, e]) if st != 0 && st <= e => {
            // Some drivers leave QUEUED or SUBMIT at 0 or after START for commands they run
            // themselves (NVIDIA's migrations): those are clamped to START, the duration stands.
            // Without them (not asked: `phases`), START bounds the clock's offset, as in
            // summary mode.
            let q = if q == 0 || q > st { st } else { q };
            let s = s.clamp(q, st);
            let offset = dev.clock.place(p.host_begin, q);
            let h = |t| mapping::to_host(t, offset);
            let time = if e > st {
                DeviceTime::Measured
            } else {
                DeviceTime::Unavailable
            };
            (phases(p).then(|| (h(q), h(s))), h(st), h(e), time)
        }
        // No usable timestamps: the slice sits at the completion, which is after the enqueue.
        _ => {
            let t = now.get().max(p.host_end);
            (None, t, t, DeviceTime::Unavailable)
        }
    };
    if time != DeviceTime::Measured {
        dev.unavailable.fetch_add(1, Ordering::Relaxed);
    }
    let command = Command {
        id: p.id,
        api: p.what.api,
        queue: queue.r,
        host_tid: p.host_tid,
        host_begin: p.host_begin,
        host_end: p.host_end,
        phases,
        start,
        end,
        time,
        status,
        class: p.what.class,
        bytes: p.what.bytes,
        blocking: p.what.blocking,
        kernel: p.what.kernel.take(),
        waits: std::mem::take(&mut p.what.waits),
        held: p.program,
    };
    buffer::push_with(|_| Record::Command(command));
}
