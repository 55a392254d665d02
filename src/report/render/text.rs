//! The report as text: the header, each device, what bounds the run, and the findings.

use super::super::bounds::{Contributor, TOP};
use super::super::{Finding, Report};
use super::device::{
    COMPARED, best, busy, compared, device_head, known, memory, migrations, projection_line,
    queue_busy, replaced, sampled, timing,
};
use super::tables::{aligned, kernels_table, table, wrapped};
use crate::units::clip;
use crate::units::{bytes, duration};
use std::fmt::Write as _;

/// What bounds the run: a heading, and one line per contributor (with its share of the wall).
pub(super) fn bounds(r: &Report) -> Option<(String, Vec<String>)> {
    let b = r.bounds.as_ref()?;
    let projected = match b.projected {
        true => format!(
            " as projected ({}: transfers at the cost model's times, kernels and the host as \
             measured)",
            duration(b.wall_ns)
        ),
        false => String::new(),
    };
    let head = format!(
        "what bounds the run{projected}: an approximate critical path, walked back from the end \
         through host waits and the commands they waited for ({} steps)",
        b.steps
    );
    let share = |ns: u64| match b.wall_ns {
        0 => String::new(),
        wall => format!(" ({:.0}%)", ns as f64 * 100.0 / wall as f64),
    };
    let rest: u64 = b.top.iter().skip(TOP).map(|c| c.ns).sum();
    let others = Contributor {
        what: "others".into(),
        ns: rest,
    };
    let lines = (b.top.iter().take(TOP))
        .chain((rest > 0).then_some(&others))
        .map(|c| {
            let mut line = format!("{} {}{}", duration(c.ns), c.what, share(c.ns));
            // Which calls the host's part is made of, where some are large.
            if c.what.starts_with("host (the program")
                && let Some(calls) = super::host::largest_own(r, 3, c.ns)
            {
                line.push_str(&format!("; its largest calls, on any thread: {calls}"));
            }
            line
        })
        .collect();
    Some((head, lines))
}

pub(super) fn header(r: &Report) -> String {
    let cut = r.signal.as_ref().map_or(String::new(), |sig| {
        format!("cut by {sig} (the program was ending: its last commands may be missing) · ")
    });
    let (cut, wall) = match r.cut_short {
        true => (
            format!(
                "CUT SHORT: the trace has no end, so this covers it to its last event only · {cut}"
            ),
            "to the cut",
        ),
        false => (cut, "wall"),
    };
    let job = r.job.describe();
    let job = if job.is_empty() {
        job
    } else {
        format!(", {job}")
    };
    format!(
        "clxfer summary · {} (pid {}{job}) · {cut}{} {wall} · started {}",
        clip(&r.program, 40),
        r.pid,
        duration(r.wall_ns),
        r.start_time
    )
}

/// The most lines the verdict takes under the header.
pub const VERDICT_LINES: usize = 5;

/// The verdict in at most [`VERDICT_LINES`] lines: the moves per device and direction, else
/// summed per direction, else as many as fit with the rest in one line (a headline and a time
/// line longer than that stay whole).
fn verdict(r: &Report) -> String {
    let v = &r.verdict;
    let merged = v.by_direction();
    let mut tries: Vec<(&[crate::report::Moved], usize)> = vec![(&v.moved, v.moved.len())];
    if r.devices.len() > 1 {
        tries.extend((0..=merged.len()).rev().map(|keep| (&merged[..], keep)));
    } else {
        tries.extend((0..v.moved.len()).rev().map(|keep| (&v.moved[..], keep)));
    }
    // With when the migrations moved their bytes where that fits whole, else without.
    let mut out = String::new();
    for migrated in [true, false] {
        for &(moved, keep) in &tries {
            out.clear();
            for (i, line) in v.lines(moved, keep, migrated).iter().enumerate() {
                // A labelled line (`time: …`) goes on under its text, not under its label.
                let (head, text) = match line.split_once(": ") {
                    _ if i == 0 => ("verdict: ".to_string(), line.as_str()),
                    Some((label, rest)) if !label.contains(' ') => (format!("  {label}: "), rest),
                    _ => ("  ".to_string(), line.as_str()),
                };
                wrapped(&head, text, &mut out);
            }
            let fits = out.lines().count() <= VERDICT_LINES;
            if fits && (!migrated || keep == moved.len()) {
                return out;
            }
        }
    }
    out
}

pub(super) fn text(r: &Report) -> String {
    let mut out = String::new();
    wrapped("", &header(r), &mut out);
    out.push_str(&verdict(r));
    for d in &r.devices {
        out.push('\n');
        out.push_str(&device_head(d));
        out.push('\n');
        if let Some(p) = &d.projection {
            wrapped("  ", &projection_line(p), &mut out);
        }
        if d.transfers.is_empty() {
            out.push_str("  no transfers\n");
        } else {
            table(&d.transfers, replaced(d), &mut out);
        }
        wrapped("  ", &best(d), &mut out);
        let against = compared(d);
        if !against.is_empty() && !replaced(d) {
            out.push_str("  projected against measured device time, transfers of 1 MiB or more:\n");
            aligned(&COMPARED, &against, 0, 2, &mut out);
        }
        if !d.operations.is_empty() {
            let created = d
                .operations
                .iter()
                .any(|o| o.kind.as_deref() == Some("Create"));
            out.push_str(match created {
                true => "  uploads at creation, map/unmap, migrate, fill and copy:\n",
                false => "  map/unmap, migrate, fill and copy:\n",
            });
            table(&d.operations, replaced(d), &mut out);
        }
        if let Some(m) = migrations(d) {
            wrapped("  ", &m, &mut out);
        }
        if !d.kernels.is_empty() {
            kernels_table(&d.kernels, &mut out);
        }
        for line in sampled(d) {
            wrapped("  ", &line, &mut out);
        }
        if let Some(b) = busy(d) {
            wrapped("  ", &b, &mut out);
        }
        // Per queue, when there are several.
        if d.queues.len() > 1 {
            for q in &d.queues {
                wrapped("    ", &queue_busy(q), &mut out);
            }
        }
        wrapped("  ", &memory(d), &mut out);
        wrapped("  ", &timing(d), &mut out);
    }
    let _ = writeln!(
        out,
        "\nhost: pinned or registered memory peaked at {}",
        known(r.pinned_host_peak_bytes.map(bytes))
    );
    if let Some((head, rows, more)) = super::host::host_calls(r) {
        out.push('\n');
        wrapped("", &format!("{head}:"), &mut out);
        aligned(&super::host::HEADS, &rows, 0, 1, &mut out);
        if let Some(more) = more {
            wrapped("  ", &more, &mut out);
        }
    }
    if let Some(failed) = super::host::failed(r) {
        wrapped("  ", &failed, &mut out);
    }
    match (r.incomplete_at_exit, r.dropped_records) {
        (Some(0), Some(0)) => {}
        (Some(incomplete), Some(dropped)) => {
            let _ = writeln!(
                out,
                "{incomplete} commands incomplete at the end; {dropped} records dropped"
            );
        }
        _ => out.push_str("commands incomplete at the end and records dropped: unknown\n"),
    }
    if let Some(o) = &r.overhead {
        wrapped("", &o.line(), &mut out);
    }
    if let Some((head, lines)) = bounds(r) {
        out.push('\n');
        wrapped("", &format!("{head}:"), &mut out);
        for line in lines {
            wrapped("  ", &line, &mut out);
        }
    }
    out.push('\n');
    if r.findings.is_empty() {
        out.push_str(
            "findings: none: no race, and no staged, held, wasted or latency-bound transfers seen\n",
        );
    } else {
        out.push_str(ranked(r));
        for (i, f) in r.findings.iter().filter(|f| !f.minor).enumerate() {
            finding_text(i + 1, f, &mut out);
        }
        if let Some(line) = minor(r) {
            wrapped("    ", &line, &mut out);
        }
    }
    out
}

/// The findings that would each save under 1% of the run (its wall time, or the projected device
/// time), counted in one line.
pub(super) fn minor(r: &Report) -> Option<String> {
    let minor: Vec<&Finding> = r.findings.iter().filter(|f| f.minor).collect();
    let first = minor.first()?;
    let kinds: Vec<&str> = minor.iter().map(|f| f.kind.as_str()).collect();
    // The replay may find that a fix saves nothing at all (what it shortens overlaps or nothing
    // waits for it): said so, not as "the largest 0 ns".
    let largest = match (first.saving_ns, minor.len()) {
        (0, 1) => "it saves no time, by replay".to_string(),
        (0, _) => "none saves any time, by replay".to_string(),
        (ns, _) => format!("the largest {}", duration(ns)),
    };
    Some(format!(
        "{} save under {:.0}% of {} ({}): {} ({largest}); the JSON report lists {} (`--format json`, `CLXFER_REPORT=*.json`)",
        match minor.len() {
            1 => "1 more finding would".to_string(),
            n => format!("{n} more findings would each"),
        },
        super::super::MINOR * 100.0,
        r.weighed_against.of,
        duration(r.weighed_against.ns),
        kinds.join(", "),
        if minor.len() == 1 { "it" } else { "them" }
    ))
}

/// The findings' heading: what the program does wrong comes first when there is any.
pub(super) fn ranked(r: &Report) -> &'static str {
    if r.findings.iter().any(|f| f.misuse) {
        "findings, what the program does wrong first, then ranked by the time they would save:\n"
    } else {
        "findings, ranked by the time they would save:\n"
    }
}

pub(super) fn finding_text(n: usize, f: &Finding, out: &mut String) {
    wrapped(&format!("{n:>2}. "), &f.title, out);
    for (i, e) in f.evidence.iter().enumerate() {
        wrapped(
            if i == 0 {
                "    evidence: "
            } else {
                "              "
            },
            e,
            out,
        );
    }
    wrapped("    fix:      ", &f.fix, out);
    wrapped("    saves:    ", &f.saves, out);
}
