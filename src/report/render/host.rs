//! The host-call table: the program's OpenCL calls by entry point, most time first, in text and
//! Markdown alike.

use super::super::{HostCall, Report};
use crate::units::{counted, duration};

/// Entry points the table lists; the rest are summed in one line.
pub(super) const SHOWN: usize = 8;

pub(super) const HEADS: [&str; 7] = [
    "entry point",
    "calls",
    "total",
    "blocked",
    "median",
    "max",
    "of wall",
];

/// The heading, the rows of the entry points shown, and a line for the rest; `None` when no
/// call was counted.
pub(super) fn host_calls(r: &Report) -> Option<(String, Vec<[String; 7]>, Option<String>)> {
    if r.host_calls.is_empty() {
        return None;
    }
    let wall = r.wall_ns.max(1) as f64;
    let row = |c: &HostCall| -> [String; 7] {
        [
            c.api.clone(),
            c.calls.to_string(),
            duration(c.total_ns),
            match c.wait_ns {
                0 => "-".into(),
                ns => duration(ns),
            },
            duration(c.median_ns),
            duration(c.max_ns),
            format!("{:.0}%", c.total_ns as f64 * 100.0 / wall),
        ]
    };
    let rows = r.host_calls.iter().take(SHOWN).map(row).collect();
    let rest = &r.host_calls[r.host_calls.len().min(SHOWN)..];
    let more = (!rest.is_empty()).then(|| {
        let calls = rest.iter().map(|c| c.calls).sum::<u64>();
        format!(
            "{}: {}, {}",
            counted(rest.len() as u64, "more entry point"),
            counted(calls, "call"),
            duration(rest.iter().map(|c| c.total_ns).sum())
        )
    });
    // Not the device tables' "waited" (a blocking transfer's wait for the commands ahead of
    // its own): the whole time of the calls that did not return before commands completed.
    let head = "host calls: the program's OpenCL calls by entry point, on all its threads \
                (blocked: the time of the calls that returned only once commands completed)"
        .to_string();
    Some((head, rows, more))
}

/// Every failed call, by entry point and error, most first: `failed calls: clCreateBuffer
/// CL_INVALID_BUFFER_SIZE (-61) 1 call`; queries marked as what they most likely are.
pub(super) fn failed(r: &Report) -> Option<String> {
    let mut all: Vec<(&HostCall, &crate::report::Failed)> = (r.host_calls.iter())
        .flat_map(|c| c.failed.iter().map(move |f| (c, f)))
        .collect();
    all.sort_by_key(|(c, f)| (c.is_query(), std::cmp::Reverse(f.calls)));
    let text: Vec<String> = (all.iter())
        .map(|(c, f)| {
            let query = match c.is_query() {
                true => ", a query (most likely asking what the device lacks)",
                false => "",
            };
            format!(
                "{} returned {}: {}{query}",
                c.api,
                f.error(),
                counted(f.calls, "call")
            )
        })
        .collect();
    (!text.is_empty()).then(|| format!("failed calls: {}", text.join("; ")))
}

/// The largest entry points of the host's own time (calls that did not wait), for the critical
/// path's host line of `within` ns: `clBuildProgram 88.6 ms, clCreateBuffer 3.10 ms`. One with
/// a call longer than the line is not part of it (a cold read found a 47.1 ms clBuildProgram
/// named under a line of 27.5 ms): it is left out.
pub(super) fn largest_own(r: &Report, most: usize, within: u64) -> Option<String> {
    let mut own: Vec<&HostCall> = (r.host_calls.iter())
        .filter(|c| c.own_ns() > 0 && c.max_ns <= within)
        .collect();
    own.sort_by_key(|c| std::cmp::Reverse(c.own_ns()));
    let wall = r.bounds.as_ref().map_or(r.wall_ns, |b| b.wall_ns);
    // Only calls worth naming: 1% of the run or more.
    let named: Vec<String> = (own.iter())
        .filter(|c| c.own_ns() * 100 >= wall)
        .take(most)
        .map(|c| format!("{} {}", c.api, duration(c.own_ns())))
        .collect();
    (!named.is_empty()).then(|| named.join(", "))
}
