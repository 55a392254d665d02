//! Whether host memory is locked with `mlock` (issue #26). A program porting `cudaMallocHost` often
//! locks its buffers and expects them to count as pinned; no OpenCL driver is told of it, so they
//! are staged like any pageable memory (docs/sources/transfer-rules.md §6 and Pitfall 10). clxfer says so in the
//! reason of a staged transfer from such memory.
//!
//! The kernel keeps the count: `VmLck` in /proc/self/status (the process's locked memory), and
//! `Locked:` per mapping in /proc/self/smaps. The status (6 µs to read here) is read for a staged
//! transfer of [`FRESH`] or more (which takes over 100 µs at staged speed), else once every
//! [`RECHECK_CALLS`] small ones on a thread, or after [`RECHECK_NS`] (looked at every 64th); the
//! mappings only when the count changed and is not zero. A program that locks nothing pays a
//! thread's counter and two atomic loads per small staged transfer: a count, not a clock, so that
//! a slower run (under valgrind, say) does not read the status more often per transfer, and no
//! lock, so that threads staging at once do not queue behind one another's reading (on NVIDIA's
//! rules every small transfer from `malloc` memory is staged: a lock here was one more line every
//! enqueuing thread wrote, and a 6 µs read under it a wait for the others).

use crate::sync::{Mutex, RwLock};
use crate::timing::clock;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many small transfers (per thread) a reading of `VmLck` is trusted for, and for how long.
const RECHECK_CALLS: u32 = 1024;
const RECHECK_NS: u64 = 100_000_000;
/// A transfer this large reads it afresh.
const FRESH: u64 = 1 << 20;
/// Locked mappings kept at most.
const RANGES: usize = 1 << 12;

/// The last reading of `VmLck`, kB.
static VM_LCK_KB: AtomicU64 = AtomicU64::new(0);
/// When it was read (monotonic ns; 0: never).
static CHECKED_NS: AtomicU64 = AtomicU64::new(0);
/// Mappings with locked pages: [start, end), sorted; empty while `VmLck` is 0.
static LOCKED: RwLock<Vec<(usize, usize)>> = RwLock::new(Vec::new());
/// Held by the thread reading the kernel's counts.
static READING: Mutex<()> = Mutex::new(());

thread_local! {
    /// Small staged transfers on this thread since it last looked.
    static SINCE: Cell<u32> = const { Cell::new(0) };
}

/// Whether any byte of `[ptr, ptr + len)` lies in a mapping with pages locked by `mlock`.
pub fn locked(ptr: usize, len: u64) -> bool {
    let since = SINCE
        .try_with(|c| {
            let n = c.get() + 1;
            c.set(if n >= RECHECK_CALLS { 0 } else { n });
            n
        })
        .unwrap_or(RECHECK_CALLS);
    let checked = CHECKED_NS.load(Ordering::Acquire);
    let stale = since >= RECHECK_CALLS
        || (since.is_multiple_of(64) && clock::now_ns().saturating_sub(checked) >= RECHECK_NS);
    if len >= FRESH || checked == 0 || stale {
        read(len >= FRESH || checked == 0);
    }
    if VM_LCK_KB.load(Ordering::Acquire) == 0 {
        return false;
    }
    let end = ptr.saturating_add(len.max(1) as usize);
    let ranges = LOCKED.read();
    let i = ranges.partition_point(|r| r.1 <= ptr);
    ranges.get(i).is_some_and(|r| r.0 < end)
}

/// Reads the kernel's counts. One thread at a time: another that finds a reading under way
/// keeps the one before, unless it must have a fresh one (`wait`).
fn read(wait: bool) {
    let _reading = match wait {
        true => READING.lock(),
        false => match READING.try_lock() {
            Some(guard) => guard,
            None => return,
        },
    };
    let kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| vm_lck_kb(&s))
        .unwrap_or(0);
    if kb != VM_LCK_KB.load(Ordering::Relaxed) {
        let ranges = match kb {
            0 => Vec::new(),
            _ => std::fs::read_to_string("/proc/self/smaps")
                .map(|s| locked_ranges(&s))
                .unwrap_or_default(),
        };
        *LOCKED.write() = ranges;
        VM_LCK_KB.store(kb, Ordering::Release);
    }
    CHECKED_NS.store(clock::now_ns().max(1), Ordering::Release);
}

/// Its locks, held across a fork (`lifecycle.rs`), in the order [`read`] takes them.
pub fn hold_for_fork() -> Box<dyn std::any::Any> {
    let reading = READING.lock();
    Box::new((reading, LOCKED.write()))
}

/// `VmLck:` of /proc/self/status, in kB.
fn vm_lck_kb(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmLck:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The mappings of /proc/self/smaps whose `Locked:` is not zero, sorted, at most [`RANGES`].
fn locked_ranges(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current = None;
    for line in smaps.lines() {
        if let Some(kb) = line.strip_prefix("Locked:") {
            let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            if let (Some(r), true) = (current.take(), kb > 0)
                && out.len() < RANGES
            {
                out.push(r);
            }
            continue;
        }
        // A mapping's first line: `start-end perms offset dev inode [path]`.
        let Some((range, _)) = line.split_once(' ') else {
            continue;
        };
        if let Some((a, b)) = range.split_once('-')
            && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            current = Some((a, b));
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
Locked:                0 kB
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
Rss:                4096 kB
Locked:             4096 kB
THPeligible:    0
7f0000400000-7f0000401000 r--p 00000000 08:01 1234                       /usr/lib/libc.so.6
Size:                  4 kB
Locked:                0 kB
";

    #[test]
    fn locked_mappings_are_read_from_smaps() {
        assert_eq!(
            locked_ranges(SMAPS),
            vec![(0x7f00_0000_0000, 0x7f00_0040_0000)]
        );
        assert_eq!(
            vm_lck_kb("Name:\tx\nVmLck:\t    4096 kB\nVmPin:\t0 kB\n"),
            Some(4096)
        );
        assert_eq!(vm_lck_kb("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_s_locked_memory_is_seen() {
        let page = 4096;
        let buf = vec![0u8; 64 * page];
        let ptr = buf.as_ptr() as usize;
        // Before: nothing locked (a test process locks nothing else).
        let before = locked(ptr, buf.len() as u64);
        // SAFETY: mlock and munlock on memory this function owns for their duration.
        let ok = unsafe { libc::mlock(buf.as_ptr().cast(), buf.len()) } == 0;
        assert!(
            ok,
            "mlock refused 256 KiB: {}",
            std::io::Error::last_os_error()
        );
        // The last reading is trusted for RECHECK_NS: forget it, as if that long had passed.
        CHECKED_NS.store(0, Ordering::Release);
        let during = locked(ptr, buf.len() as u64);
        let beside = locked(ptr + buf.len() + (1 << 30), 1);
        // SAFETY: as above.
        unsafe { libc::munlock(buf.as_ptr().cast(), buf.len()) };
        assert!(
            !before && during && !beside,
            "before {before}, during {during}, beside {beside}"
        );
    }
}
