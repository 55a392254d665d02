//! Text layout: aligned columns, tables of transfers, operations and kernels (text and
//! Markdown), and lines wrapped at [`WIDTH`].

use super::super::{KernelRow, Row};
use crate::units::{bytes, clip, duration, gbps};
use std::fmt::Write as _;

pub const WIDTH: usize = 100;

/// The columns of a transfers or operations table: `host time` is the calls' own, `waited` the
/// time blocking calls waited for the commands ahead of theirs.
pub(super) const HEADS: [&str; 10] = [
    "",
    "dir",
    "path",
    "calls",
    "bytes",
    "device time",
    "host time",
    "waited",
    "median GB/s",
    "p90 GB/s",
];

/// Under forced rules the time column is the projection's (its bandwidths are already).
pub(super) fn heads(projected: bool) -> [&'static str; 10] {
    let mut h = HEADS;
    if projected {
        h[5] = "projected";
    }
    h
}

pub(super) fn cells(r: &Row, projected: bool) -> [String; 10] {
    let opt = |v: Option<f64>| v.map_or("-".into(), gbps);
    let some = |ns: u64| if ns > 0 { duration(ns) } else { "-".into() };
    // Whole: with the estimate for what sampling left untimed, marked `~`.
    let estimated = !projected && r.sampled.is_some_and(|s| s.estimated_ns.is_some());
    let device = match r.projected_ns {
        Some(ns) if projected => some(ns),
        _ if estimated => format!("~{}", duration(r.time_ns(false))),
        _ => some(r.device_ns),
    };
    [
        r.kind.clone().unwrap_or_default(),
        r.direction.clone(),
        r.path.clone(),
        r.calls.to_string(),
        bytes(r.bytes),
        device,
        duration(r.host_ns.saturating_sub(r.waited_ns)),
        some(r.waited_ns),
        opt(r.median_gbps),
        opt(r.p90_gbps),
    ]
}

/// The kernels table: name, launches, device time, the median launch, time in the calls.
pub(super) fn kernels_table(rows: &[KernelRow], out: &mut String) {
    const HEADS: [&str; 5] = ["kernel", "calls", "device time", "median", "host time"];
    let body: Vec<[String; 5]> = rows
        .iter()
        .map(|k| {
            [
                clip(&k.name, 40),
                k.calls.to_string(),
                kernel_time(k),
                k.median_ns.map_or("-".into(), duration),
                duration(k.host_ns),
            ]
        })
        .collect();
    aligned(&HEADS, &body, 0, 1, out);
}

/// A kernel's device time, whole: with the estimate for launches sampling left untimed, `~`.
fn kernel_time(k: &KernelRow) -> String {
    match k.sampled.and_then(|s| s.estimated_ns) {
        Some(_) => format!("~{}", duration(k.time_ns())),
        None if k.device_ns > 0 => duration(k.device_ns),
        None => "-".into(),
    }
}

pub(super) fn md_kernels(rows: &[KernelRow], out: &mut String) {
    out.push_str("| kernel | calls | device time | median | host time |\n|---|---|---|---|---|\n");
    for k in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            k.name,
            k.calls,
            kernel_time(k),
            k.median_ns.map_or("-".into(), duration),
            duration(k.host_ns)
        );
    }
}

/// Columns aligned: text left, numbers right; the first column only when some row has a kind.
pub(super) fn table(rows: &[Row], projected: bool, out: &mut String) {
    let with_kind = rows.iter().any(|r| r.kind.is_some());
    let first = usize::from(!with_kind);
    let body: Vec<[String; 10]> = rows.iter().map(|r| cells(r, projected)).collect();
    aligned(&heads(projected), &body, first, 3, out);
}

pub(super) fn md_table(rows: &[Row], projected: bool, out: &mut String) {
    let with_kind = rows.iter().any(|r| r.kind.is_some());
    let first = usize::from(!with_kind);
    let heads: Vec<&str> = heads(projected)
        .iter()
        .skip(first)
        .map(|h| if h.is_empty() { "kind" } else { h })
        .collect();
    let _ = writeln!(out, "| {} |", heads.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(heads.len()));
    for r in rows {
        let c = cells(r, projected);
        let _ = writeln!(out, "| {} |", c[first..].join(" | "));
    }
}

/// `heads` and `body` as aligned columns from column `first` on: the first `left` columns left
/// (text), the rest right (numbers).
pub(super) fn aligned<const N: usize>(
    heads: &[&str; N],
    body: &[[String; N]],
    first: usize,
    left: usize,
    out: &mut String,
) {
    let mut widths = heads.map(|h| h.chars().count());
    for r in body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; N], out: &mut String| {
        let mut l = String::from("  ");
        for (i, c) in cells.iter().enumerate().skip(first) {
            let pad = widths[i] - c.chars().count();
            if i < left {
                l += c;
                l += &" ".repeat(pad + 2);
            } else {
                l += &" ".repeat(pad + 2);
                l += c;
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(*heads, out);
    for r in body {
        line(std::array::from_fn(|i| r[i].as_str()), out);
    }
}

/// `text` wrapped at [`WIDTH`], the first line after `head`, the rest indented to match.
pub fn wrapped(head: &str, text: &str, out: &mut String) {
    let indent = " ".repeat(head.chars().count());
    let mut line = head.to_string();
    let mut empty = true;
    // A number and its unit stay on one line, and "finding" and its number.
    const UNITS: [&str; 9] = ["ns", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "GB/s"];
    let mut words: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        let bare = w.trim_end_matches([',', ';', ':', ')', '.']);
        let numbered = |last: &str| {
            last.ends_with("finding")
                && bare.chars().all(|c| c.is_ascii_digit())
                && !bare.is_empty()
        };
        match words.last_mut() {
            Some(last)
                if (UNITS.contains(&bare) && last.ends_with(|c: char| c.is_ascii_digit()))
                    || numbered(last) =>
            {
                last.push(' ');
                last.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    for word in &words {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line += word;
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A number stays with its unit, and a finding's number with "finding", wherever the line
    /// breaks.
    #[test]
    fn a_line_never_breaks_inside_a_figure_or_a_finding_reference() {
        for pad in 0..WIDTH - 10 {
            let text = format!("{} saves ~74.9 ms projected (finding 12)", "x".repeat(pad));
            let mut out = String::new();
            wrapped("verdict: ", &text, &mut out);
            let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                joined.ends_with("saves ~74.9 ms projected (finding 12)"),
                "{out}"
            );
            for line in out.lines() {
                assert!(
                    !line.ends_with("(finding") && !line.ends_with("~74.9"),
                    "{out}"
                );
                assert!(
                    line.chars().count() <= WIDTH || !line.contains(' '),
                    "{out}"
                );
            }
        }
    }
}
