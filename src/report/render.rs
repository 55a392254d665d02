//! The report as text (aligned columns, no line over [`WIDTH`]), Markdown or JSON.

use super::{DeviceReport, Finding, KernelRow, Projection, QueueBusy, Report, Row};
use crate::units::{bytes, duration, gbps};
use std::fmt::Write as _;

pub const WIDTH: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

impl Format {
    pub const WORDS: &'static [&'static str] = &["text", "json", "md"];

    pub fn parse(word: &str) -> Option<Format> {
        match word {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "md" => Some(Format::Markdown),
            _ => None,
        }
    }

    /// By a file name's extension: `.json`, `.md`, else text.
    pub fn for_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("md") => Format::Markdown,
            _ => Format::Text,
        }
    }
}

impl Report {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => text(self),
            Format::Markdown => markdown(self),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
                s.push('\n');
                s
            }
        }
    }
}

/// The columns of a transfers or operations table: `host time` is the calls' own, `waited` the
/// time blocking calls waited for the commands ahead of theirs.
const HEADS: [&str; 10] = [
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
fn heads(projected: bool) -> [&'static str; 10] {
    let mut h = HEADS;
    if projected {
        h[5] = "projected";
    }
    h
}

fn cells(r: &Row, projected: bool) -> [String; 10] {
    let opt = |v: Option<f64>| v.map_or("-".into(), gbps);
    let some = |ns: u64| if ns > 0 { duration(ns) } else { "-".into() };
    let device = match r.projected_ns {
        Some(ns) if projected => ns,
        _ => r.device_ns,
    };
    [
        r.kind.clone().unwrap_or_default(),
        r.direction.clone(),
        r.path.clone(),
        r.calls.to_string(),
        bytes(r.bytes),
        some(device),
        duration(r.host_ns.saturating_sub(r.waited_ns)),
        some(r.waited_ns),
        opt(r.median_gbps),
        opt(r.p90_gbps),
    ]
}

/// The kernels table: name, launches, device time, the median launch, time in the calls.
fn kernels_table(rows: &[KernelRow], out: &mut String) {
    const HEADS: [&str; 5] = ["kernel", "calls", "device time", "median", "host time"];
    let body: Vec<[String; 5]> = rows
        .iter()
        .map(|k| {
            [
                clip(&k.name, 40),
                k.calls.to_string(),
                if k.device_ns > 0 {
                    duration(k.device_ns)
                } else {
                    "-".into()
                },
                k.median_ns.map_or("-".into(), duration),
                duration(k.host_ns),
            ]
        })
        .collect();
    aligned(&HEADS, &body, 0, 1, out);
}

fn md_kernels(rows: &[KernelRow], out: &mut String) {
    out.push_str("| kernel | calls | device time | median | host time |\n|---|---|---|---|---|\n");
    for k in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            k.name,
            k.calls,
            duration(k.device_ns),
            k.median_ns.map_or("-".into(), duration),
            duration(k.host_ns)
        );
    }
}

/// Columns aligned: text left, numbers right; the first column only when some row has a kind.
fn table(rows: &[Row], projected: bool, out: &mut String) {
    let with_kind = rows.iter().any(|r| r.kind.is_some());
    let first = usize::from(!with_kind);
    let body: Vec<[String; 10]> = rows.iter().map(|r| cells(r, projected)).collect();
    aligned(&heads(projected), &body, first, 3, out);
}

/// The projection stands in for the device's own times.
fn replaced(d: &DeviceReport) -> bool {
    d.projection.as_ref().is_some_and(|p| p.replaces)
}

/// What a projection is, in a line above the tables.
fn projection_line(p: &Projection) -> String {
    if p.on.is_empty() {
        format!(
            "not projected: the {} rules were forced on this device and have no cost model \
             (docs/RULES.md), so its transfers show no device time or bandwidth (this device's \
             say nothing of such a device); host times and kernels are this device's",
            p.rules
        )
    } else if p.replaces {
        format!(
            "projected: the device times and GB/s of transfers below are those of the {} cost \
             model (measured on {}; docs/RULES.md), not this device's, on which the {} rules \
             were forced; host times and kernels are this device's",
            p.rules, p.on, p.rules
        )
    } else {
        format!(
            "projected beside the measured figures: the {} cost model (measured on {}; \
             docs/RULES.md)",
            p.rules, p.on
        )
    }
}

/// The projection against the measurement (`clxfer report --project` on a device the rules
/// describe): transfers of 1 MiB or more with a device time.
const COMPARED: [&str; 7] = [
    "dir",
    "path",
    "calls",
    "bytes",
    "measured",
    "projected",
    "projected/measured",
];

fn compared(d: &DeviceReport) -> Vec<[String; 7]> {
    (d.transfers.iter())
        .filter_map(|r| Some((r, r.compared?)))
        .map(|(r, c)| {
            [
                r.direction.clone(),
                r.path.clone(),
                c.calls.to_string(),
                bytes(c.bytes),
                duration(c.measured_ns),
                duration(c.projected_ns),
                format!("{:.2}", c.ratio()),
            ]
        })
        .collect()
}

/// `heads` and `body` as aligned columns from column `first` on: the first `left` columns left
/// (text), the rest right (numbers).
fn aligned<const N: usize>(
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
    // A number and its unit stay on one line.
    const UNITS: [&str; 9] = ["ns", "µs", "ms", "s", "B", "KiB", "MiB", "GiB", "GB/s"];
    let mut words: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        let bare = w.trim_end_matches([',', ';', ':', ')', '.']);
        match words.last_mut() {
            Some(last) if UNITS.contains(&bare) && last.ends_with(|c: char| c.is_ascii_digit()) => {
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

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

fn forced(d: &DeviceReport) -> bool {
    crate::model::rules::forced(&d.rules, &d.auto_rules)
}

fn device_head(d: &DeviceReport) -> String {
    let size = if d.global_mem_bytes > 0 {
        format!(" · {}", bytes(d.global_mem_bytes))
    } else {
        String::new()
    };
    let rules = if forced(d) {
        format!("{} rules (forced; auto: {})", d.rules, d.auto_rules)
    } else {
        format!("{} rules", d.rules)
    };
    let fixed = format!("device #{} ·  · {rules}{size}", d.index);
    let name = clip(&d.name, WIDTH.saturating_sub(fixed.chars().count()).max(8));
    format!("device #{} · {name} · {rules}{size}", d.index)
}

fn best(d: &DeviceReport) -> String {
    if d.best_pinned_gbps.is_empty() {
        return "best pinned: no pinned transfer of 1 MiB or more".into();
    }
    let parts: Vec<String> = d
        .best_pinned_gbps
        .iter()
        .map(|(dir, g)| format!("{dir} {} GB/s", gbps(*g)))
        .collect();
    let caveat = if replaced(d) {
        format!(" (projected: the {} cost model's)", d.rules)
    } else if forced(d) {
        format!(" (this device's speed, not a {} device's)", d.rules)
    } else {
        String::new()
    };
    format!(
        "best pinned (transfers of 1 MiB or more): {}{caveat}",
        parts.join(" · ")
    )
}

fn memory(d: &DeviceReport) -> String {
    let of = if d.global_mem_bytes > 0 {
        format!(" of {}", bytes(d.global_mem_bytes))
    } else {
        String::new()
    };
    let mut s = format!(
        "device memory: buffers and SVM/USM allocations peaked at {}{of}",
        known(d.resident_peak_bytes.map(bytes))
    );
    if let Some(ahp) = d.alloc_host_ptr_peak_bytes.filter(|&b| b > 0) {
        let _ = write!(s, " (ALLOC_HOST_PTR {})", bytes(ahp));
    }
    s
}

/// The device's busy time, idle time, and the overlap of transfers with kernels.
fn busy(d: &DeviceReport) -> Option<String> {
    let b = d.busy?;
    let share = if b.transfer_ns > 0 {
        format!(
            " ({:.0}% of the transfer time)",
            100.0 * b.overlap_ns as f64 / b.transfer_ns as f64
        )
    } else {
        String::new()
    };
    Some(format!(
        "busy: {} of a {} span (idle {}): transfers {}, kernels {}, both at once {}{share}",
        duration(b.busy_ns),
        duration(b.span_ns),
        duration(b.span_ns.saturating_sub(b.busy_ns)),
        duration(b.transfer_ns),
        duration(b.kernel_ns),
        duration(b.overlap_ns),
    ))
}

fn queue_busy(q: &QueueBusy) -> String {
    let b = &q.busy;
    format!(
        "queue #{}: busy {} (transfers {}, kernels {})",
        q.queue,
        duration(b.busy_ns),
        duration(b.transfer_ns),
        duration(b.kernel_ns)
    )
}

/// A figure only a trace's end gives: "unknown" when the trace was cut short.
fn known(figure: Option<String>) -> String {
    figure.unwrap_or_else(|| "unknown".into())
}

/// How the rows with calls sampled device timing left untimed were extrapolated: one line each.
fn sampled(d: &DeviceReport) -> Vec<String> {
    let rows = d.transfers.iter().chain(&d.operations);
    let rows = rows.filter_map(|r| {
        let s = r.sampled?;
        let kind = r.kind.as_deref().map_or(String::new(), |k| format!("{k} "));
        Some(format!(
            "sampled {kind}{} {}: {}",
            r.direction,
            r.path,
            s.line()
        ))
    });
    let kernels = (d.kernels.iter()).filter_map(|k| {
        Some(format!(
            "sampled kernel {}: {}",
            clip(&k.name, 40),
            k.sampled?.line()
        ))
    });
    rows.chain(kernels).collect()
}

fn timing(d: &DeviceReport) -> String {
    let clock = known(d.clock_mapping.clone().filter(|c| !c.is_empty()));
    let beyond = if d.clock_mapping.is_none() {
        " in the part read"
    } else {
        ""
    };
    let sampled = match d.sampled_out {
        0 => String::new(),
        n => format!(
            "; {n} untimed by sampling (CLXFER_DEVICE_TIMING=on; `all` times every command)"
        ),
    };
    format!(
        "timing: clock mapping {clock}; {} transfers without device time{beyond}{sampled}",
        d.without_device_time
    )
}

/// What bounds the run: a heading, and one line per contributor (with its share of the wall).
fn bounds(r: &Report) -> Option<(String, Vec<String>)> {
    let b = r.bounds.as_ref()?;
    let head = format!(
        "what bounds the run: an approximate critical path, walked back from the end through \
         host waits and the commands they waited for ({} steps)",
        b.steps
    );
    let share = |ns: u64| match b.wall_ns {
        0 => String::new(),
        wall => format!(" ({:.0}%)", ns as f64 * 100.0 / wall as f64),
    };
    let lines = b
        .top
        .iter()
        .map(|c| format!("{} {}{}", duration(c.ns), c.what, share(c.ns)))
        .collect();
    Some((head, lines))
}

fn header(r: &Report) -> String {
    format!(
        "clxfer summary · {} (pid {}) · {} wall · started {}",
        clip(&r.program, 40),
        r.pid,
        duration(r.wall_ns),
        r.start_time
    )
}

fn text(r: &Report) -> String {
    let mut out = String::new();
    wrapped("", &header(r), &mut out);
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
            out.push_str("  map/unmap, migrate, fill and copy:\n");
            table(&d.operations, replaced(d), &mut out);
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

/// The findings that would each save under 1% of the run's wall time, counted in one line.
fn minor(r: &Report) -> Option<String> {
    let minor: Vec<&Finding> = r.findings.iter().filter(|f| f.minor).collect();
    let first = minor.first()?;
    let kinds: Vec<&str> = minor.iter().map(|f| f.kind).collect();
    Some(format!(
        "{} save under {:.0}% of the run's wall time ({}): {} (the largest {}); --format \
         json lists {}",
        match minor.len() {
            1 => "1 more finding would".to_string(),
            n => format!("{n} more findings would each"),
        },
        super::MINOR * 100.0,
        duration(r.wall_ns),
        kinds.join(", "),
        duration(first.saving_ns),
        if minor.len() == 1 { "it" } else { "them" }
    ))
}

/// The findings' heading: what the program does wrong comes first when there is any.
fn ranked(r: &Report) -> &'static str {
    if r.findings.iter().any(|f| f.misuse) {
        "findings, what the program does wrong first, then ranked by the time they would save:\n"
    } else {
        "findings, ranked by the time they would save:\n"
    }
}

fn finding_text(n: usize, f: &Finding, out: &mut String) {
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

fn md_table(rows: &[Row], projected: bool, out: &mut String) {
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

fn markdown(r: &Report) -> String {
    let mut out = format!("# {}\n", header(r));
    for d in &r.devices {
        let _ = writeln!(out, "\n## {}\n", device_head(d));
        if let Some(p) = &d.projection {
            let _ = writeln!(out, "{}.\n", upper(&projection_line(p)));
        }
        if d.transfers.is_empty() {
            out.push_str("No transfers.\n");
        } else {
            md_table(&d.transfers, replaced(d), &mut out);
        }
        let _ = writeln!(out, "\n{}.", best(d));
        let against = compared(d);
        if !against.is_empty() && !replaced(d) {
            out.push_str(
                "\nProjected against measured device time, transfers of 1 MiB or more:\n\n",
            );
            let _ = writeln!(
                out,
                "| {} |\n|{}",
                COMPARED.join(" | "),
                "---|".repeat(COMPARED.len())
            );
            for row in against {
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
        }
        if !d.operations.is_empty() {
            out.push_str("\nMap/unmap, migrate, fill and copy:\n\n");
            md_table(&d.operations, replaced(d), &mut out);
        }
        if !d.kernels.is_empty() {
            out.push_str("\nKernels:\n\n");
            md_kernels(&d.kernels, &mut out);
        }
        let lines = sampled(d);
        if !lines.is_empty() {
            out.push('\n');
        }
        for line in lines {
            let _ = writeln!(out, "- {}", upper(&line));
        }
        if let Some(b) = busy(d) {
            let _ = writeln!(out, "\n{}.", upper(&b));
        }
        if d.queues.len() > 1 {
            out.push('\n');
            for q in &d.queues {
                let _ = writeln!(out, "- {}", upper(&queue_busy(q)));
            }
        }
        let _ = writeln!(out, "\n{}. {}.", upper(&memory(d)), upper(&timing(d)));
    }
    let _ = writeln!(
        out,
        "\nHost: pinned or registered memory peaked at {}.",
        known(r.pinned_host_peak_bytes.map(bytes))
    );
    if let Some(o) = &r.overhead {
        let _ = writeln!(out, "\n{}.", upper(&o.line()));
    }
    if let Some((head, lines)) = bounds(r) {
        let _ = writeln!(out, "\n## {}\n", upper(&head));
        for line in lines {
            let _ = writeln!(out, "- {line}");
        }
    }
    let _ = writeln!(
        out,
        "\n## {}\n",
        upper(ranked(r).trim_end_matches([':', '\n']))
    );
    if r.findings.is_empty() {
        out.push_str("None.\n");
    }
    for (i, f) in r.findings.iter().filter(|f| !f.minor).enumerate() {
        let _ = writeln!(out, "{}. **{}**", i + 1, f.title);
        for e in &f.evidence {
            let _ = writeln!(out, "   - Evidence: {e}");
        }
        let _ = writeln!(out, "   - Fix: {}", f.fix);
        let _ = writeln!(out, "   - Saves: {}", f.saves);
    }
    if let Some(line) = minor(r) {
        let _ = writeln!(out, "\n{}.", upper(&line));
    }
    out
}

fn upper(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
