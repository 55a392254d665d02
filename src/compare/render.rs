//! The comparison as text (the verdict first: what went away, what moved, what got worse; then
//! each device's tables), Markdown (for a pull request's comment), JSON and CSV.

use super::diff::{DeviceDiff, PairDiff, RowDiff};
use super::figure::{Figure, Verdict};
use super::findings::FindingDiff;
use super::pair::Diff;
use crate::report::{Format, Output};
use crate::units::{bytes, duration, gbps};
use std::fmt::Write as _;

/// How noise is told from a change, as the output says it.
pub const NOISE: &str = "counts, bytes, paths and projected times are exact; a measured \
                         figure is judged against runs: with two or more a side it changed when \
                         Welch's t-test on them says so at 0.1%; with one run a side, what the \
                         run's own spread (its calls' 10th-90th percentile band) and its sampled \
                         estimates' margins cover is noise, and the rest is shown, not judged";

pub fn render(d: &Diff, format: Output) -> String {
    match format {
        Output::Report(Format::Json) => serde_json::to_string_pretty(d).unwrap_or_default() + "\n",
        Output::Csv => csv(d),
        Output::Report(Format::Markdown) => markdown(d),
        Output::Report(Format::Text) => text(d),
    }
}

fn ns(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| duration(v.max(0.0).round() as u64))
}

fn size(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| bytes(v.max(0.0) as u64))
}

fn count(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{}", v as u64))
}

fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), gbps)
}

/// `196 µs → 175 µs (−11%; better)`: the change, and `note` (the verdict's word) if any.
fn change(f: &Figure, show: fn(Option<f64>) -> String, note: Option<&str>) -> String {
    let mut s = format!("{} → {}", show(f.before), show(f.after));
    let pct = (f.relative().filter(|r| r.abs() >= 0.0005)).map(|r| format!("{:+.0}%", r * 100.0));
    let inside: Vec<String> = pct.into_iter().chain(note.map(String::from)).collect();
    if !inside.is_empty() {
        let _ = write!(s, " ({})", inside.join("; "));
    }
    s
}

/// A row's figure, `same` when unchanged.
fn cell(f: &Figure, show: fn(Option<f64>) -> String) -> String {
    match f.verdict {
        Verdict::Same => show(f.before),
        _ => format!("{} → {}", show(f.before), show(f.after)),
    }
}

/// The verdict of a row: the worst of its figures' (gone and new as such).
fn row_verdict(r: &RowDiff) -> Verdict {
    let figs = [&r.time_ns, &r.median_gbps, &r.calls, &r.bytes];
    if let Some(v) = figs
        .iter()
        .map(|f| f.verdict)
        .find(|v| matches!(v, Verdict::Gone | Verdict::New))
    {
        return v;
    }
    for v in [
        Verdict::Worse,
        Verdict::Better,
        Verdict::Changed,
        Verdict::Noise,
    ] {
        if figs.iter().any(|f| f.verdict == v) {
            return v;
        }
    }
    Verdict::Same
}

fn row_name(r: &RowDiff) -> String {
    match &r.kind {
        Some(k) => format!("{k} {} {}", r.direction, r.path),
        None => format!("{} {}", r.direction, r.path),
    }
}

fn finding_line(f: &FindingDiff) -> String {
    let mut s = format!("{}: {}", f.state.word(), f.title);
    match (f.state, f.realised) {
        (Verdict::Gone, Some(r)) => {
            let _ = write!(
                s,
                ": promised ~{}, saved {} on the critical path ({})",
                duration(r.promised_ns),
                if r.saved_ns < 0 {
                    format!("-{}", duration(r.saved_ns.unsigned_abs()))
                } else {
                    duration(r.saved_ns as u64)
                },
                if r.as_promised {
                    "as promised"
                } else {
                    "less than promised"
                }
            );
        }
        (Verdict::Gone, _) if let Some(m) = f.freed => {
            let _ = write!(
                s,
                ": promised {} of device memory, freed {} ({})",
                bytes(m.promised_bytes),
                match m.freed_bytes {
                    n if n < 0 => format!("-{}", bytes(n.unsigned_abs())),
                    n => bytes(n as u64),
                },
                if m.as_promised {
                    "as promised"
                } else {
                    "not as promised"
                }
            );
        }
        (Verdict::Gone, None) if f.saving_before_ns.is_some_and(|s| s > 0) => {
            let _ = write!(
                s,
                ": it would have saved ~{}",
                ns(f.saving_before_ns.map(|v| v as f64))
            );
        }
        (Verdict::New, _) if f.saving_after_ns.is_some_and(|s| s > 0) => {
            let _ = write!(
                s,
                ": would save ~{}",
                ns(f.saving_after_ns.map(|v| v as f64))
            );
        }
        _ => {}
    }
    s
}

/// The verdict's lines: what went away and came, what moved, the transfer time, what got worse,
/// the wall time.
pub fn verdict(p: &PairDiff) -> Vec<String> {
    let mut out = Vec::new();
    if !p.cut_short.is_empty() {
        out.push(format!(
            "CUT SHORT: the {} side's trace has no end: its figures stop at its last event, so \
             this compares part of a run",
            p.cut_short.join(" and ")
        ));
    }
    if let Some(other) = &p.program_after {
        out.push(format!(
            "different programs: {} before, {other} after; compared by device, direction and \
             path, and findings by kind",
            p.program
        ));
    }
    out.push(overall_line(p));
    for f in p.findings.iter().filter(|f| f.state != Verdict::Same) {
        out.push(finding_line(f));
    }
    for d in &p.devices {
        let moved: Vec<String> = (d.moved.iter())
            .map(|m| format!("{} {} {} → {}", m.direction, bytes(m.bytes), m.from, m.to))
            .collect();
        if !moved.is_empty() {
            out.push(format!(
                "moved on device #{}: {}",
                d.index,
                moved.join("; ")
            ));
        }
        if d.transfer_ns.verdict != Verdict::Same {
            out.push(format!(
                "transfer time on device #{}{}: {}",
                d.index,
                d.projected.as_ref().map_or(String::new(), |r| format!(
                    " (projected: the {r} cost model)"
                )),
                change(&d.transfer_ns, ns, Some(d.transfer_ns.verdict.word()))
            ));
        }
    }
    let worse = worse(p);
    let transfer_worse = p
        .devices
        .iter()
        .any(|d| d.transfer_ns.verdict == Verdict::Worse);
    if !worse.is_empty() {
        out.push(format!("worse: {}", worse.join("; ")));
    } else if !transfer_worse {
        out.push("nothing got worse".into());
    }
    let unjudged = unjudged(p);
    if !unjudged.is_empty() {
        out.push(format!(
            "beyond one run's own spread, not judged (one run a side: give each side several \
             runs to measure their noise): {}",
            unjudged.join("; ")
        ));
    }
    if p.wall_ns.verdict != Verdict::Same {
        let note = match p.wall_ns.verdict {
            Verdict::Unjudged => "one run a side: its noise is not known, so not judged",
            v => v.word(),
        };
        out.push(format!("wall time {}", change(&p.wall_ns, ns, Some(note))));
    }
    out
}

/// The change as a whole, and what it rests on: misuses, findings, transfer time.
fn overall_line(p: &PairDiff) -> String {
    let count = |state: Verdict, misuse: bool| {
        (p.findings.iter())
            .filter(|f| f.state == state && f.misuse == misuse)
            .count()
    };
    let mut why = Vec::new();
    for (n, what) in [
        (count(Verdict::Gone, true), "misuse gone"),
        (count(Verdict::New, true), "misuse new"),
        (count(Verdict::Gone, false), "finding gone"),
    ] {
        if n > 0 {
            let (word, rest) = what.split_once(' ').unwrap_or((what, ""));
            why.push(format!(
                "{n} {word}{} {rest}",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    let transfer: Vec<Verdict> = p.devices.iter().map(|d| d.transfer_ns.verdict).collect();
    if !transfer.is_empty() {
        let projected = p.devices.iter().all(|d| d.projected.is_some());
        let word = if transfer.iter().all(|v| *v == Verdict::Same) {
            "the same"
        } else if transfer.iter().all(|v| !v.changed()) {
            "within noise"
        } else if transfer.contains(&Verdict::Worse) && transfer.contains(&Verdict::Better) {
            "better on one device, worse on another"
        } else if transfer.contains(&Verdict::Worse) {
            "worse"
        } else if transfer.contains(&Verdict::Better) {
            "better"
        } else {
            "changed"
        };
        why.push(format!(
            "transfer time {word}{}",
            if projected { " (projected)" } else { "" }
        ));
    }
    let word = match p.overall {
        Verdict::Changed => "mixed",
        Verdict::Same => "no change beyond the noise",
        v => v.word(),
    };
    format!("overall: {word} ({})", why.join("; "))
}

/// What got worse beyond the noise: rows that take longer or move slower, operations that
/// came and take time (the reads' and writes' new paths are the moves'), kernels.
fn worse(p: &PairDiff) -> Vec<String> {
    let mut out = Vec::new();
    for d in &p.devices {
        for r in d.transfers.iter().chain(&d.operations) {
            if r.time_ns.verdict == Verdict::Worse {
                let t = change(&r.time_ns, ns, None);
                out.push(format!("device #{} {} time {t}", d.index, row_name(r)));
            } else if r.median_gbps.verdict == Verdict::Worse {
                let g = change(&r.median_gbps, rate, None);
                out.push(format!(
                    "device #{} {} median {g} GB/s",
                    d.index,
                    row_name(r)
                ));
            }
        }
        // An operation that came is worse only where the device's transfer time did not fall or
        // hold: the HOST hand-off's two legs gone and the flags-0 move come cost the same.
        let offset = matches!(
            d.transfer_ns.verdict,
            Verdict::Same | Verdict::Noise | Verdict::Better
        );
        for r in (d.operations.iter()).filter(|r| {
            !offset && r.time_ns.verdict == Verdict::New && r.time_ns.after.is_some_and(|t| t > 0.0)
        }) {
            out.push(format!(
                "device #{} {} came: {} call{}, {}, {}",
                d.index,
                row_name(r),
                count(r.calls.after),
                if r.calls.after == Some(1.0) { "" } else { "s" },
                size(r.bytes.after),
                ns(r.time_ns.after)
            ));
        }
        for k in d
            .kernels
            .iter()
            .filter(|k| k.device_ns.verdict == Verdict::Worse)
        {
            let t = change(&k.device_ns, ns, None);
            out.push(format!("device #{} kernel {} {t}", d.index, k.name));
        }
    }
    out
}

/// Measured figures that moved beyond what one run's spread covers, with one run a side.
fn unjudged(p: &PairDiff) -> Vec<String> {
    let mut out = Vec::new();
    for d in &p.devices {
        for r in d.transfers.iter().chain(&d.operations) {
            if r.time_ns.verdict == Verdict::Unjudged {
                let t = change(&r.time_ns, ns, None);
                out.push(format!("device #{} {} time {t}", d.index, row_name(r)));
            }
        }
        for k in d
            .kernels
            .iter()
            .filter(|k| k.device_ns.verdict == Verdict::Unjudged)
        {
            let t = change(&k.device_ns, ns, None);
            out.push(format!("device #{} kernel {} {t}", d.index, k.name));
        }
    }
    out
}

fn head(p: &PairDiff) -> String {
    let runs = |n: usize| {
        if n == 1 {
            String::new()
        } else {
            format!(", {n} runs")
        }
    };
    format!(
        "clxfer diff · {} (pid {}{} → pid {}{})",
        match &p.program_after {
            Some(a) => format!("{} → {a}", p.program),
            None => p.program.clone(),
        },
        p.pid_before,
        runs(p.runs_before),
        p.pid_after,
        runs(p.runs_after)
    )
}

/// A device's table rows: name, calls, bytes, time, median, verdict.
fn rows(d: &DeviceDiff) -> Vec<[String; 6]> {
    (d.transfers.iter().chain(&d.operations))
        .map(|r| {
            [
                row_name(r),
                cell(&r.calls, count),
                cell(&r.bytes, size),
                cell(&r.time_ns, ns),
                cell(&r.median_gbps, rate),
                row_verdict(r).word().into(),
            ]
        })
        .collect()
}

const HEADS: [&str; 6] = ["", "calls", "bytes", "time", "median GB/s", ""];

fn device_title(d: &DeviceDiff) -> String {
    let mut s = format!("device #{} · {}", d.index, d.name);
    if let Some(a) = &d.name_after {
        let _ = write!(s, " (after: {a})");
    }
    if let Some(r) = &d.projected {
        let _ = write!(s, " · times projected (the {r} cost model)");
    }
    s
}

fn busy_line(d: &DeviceDiff) -> Option<String> {
    if d.busy_ns.before.is_none() && d.busy_ns.after.is_none() {
        return None;
    }
    Some(format!(
        "busy {} ({}); transfers and kernels at once {} ({})",
        cell(&d.busy_ns, ns),
        d.busy_ns.verdict.word(),
        cell(&d.overlap_ns, ns),
        d.overlap_ns.verdict.word()
    ))
}

fn text(d: &Diff) -> String {
    let mut s = String::new();
    for p in &d.pairs {
        let _ = writeln!(s, "{}\n", head(p));
        let _ = writeln!(s, "verdict:");
        for l in verdict(p) {
            crate::report::wrapped("  - ", &l, &mut s);
        }
        for dev in &p.devices {
            let _ = writeln!(s, "\n{}", device_title(dev));
            table(HEADS, &rows(dev), &mut s);
            if !dev.kernels.is_empty() {
                let body: Vec<[String; 6]> = (dev.kernels.iter())
                    .map(|k| {
                        [
                            format!("kernel {}", k.name),
                            cell(&k.calls, count),
                            String::new(),
                            cell(&k.device_ns, ns),
                            cell(&k.median_ns, ns),
                            k.device_ns.verdict.word().into(),
                        ]
                    })
                    .collect();
                table(KERNEL_HEADS, &body, &mut s);
            }
            if let Some(b) = busy_line(dev) {
                let _ = writeln!(s, "  {b}");
            }
        }
        for (index, name, side) in &p.devices_alone {
            let _ = writeln!(s, "\ndevice #{index} · {name}: only {side}");
        }
        s.push('\n');
        crate::report::wrapped("noise: ", NOISE, &mut s);
        s.push('\n');
    }
    alone(d, &mut s);
    s
}

fn alone(d: &Diff, s: &mut String) {
    for (side, list) in [("before", &d.only_before), ("after", &d.only_after)] {
        for a in list.iter() {
            let _ = writeln!(
                s,
                "only {side}: {} (pid {}): no process of that program on the other side \
                 (pair it by hand: --pair BEFORE=AFTER)",
                a.program, a.pid
            );
        }
    }
    if d.pairs.is_empty() && d.only_before.is_empty() && d.only_after.is_empty() {
        let _ = writeln!(s, "no process on either side");
    }
}

const KERNEL_HEADS: [&str; 6] = ["", "calls", "", "device time", "median", ""];

fn table(heads: [&str; 6], body: &[[String; 6]], s: &mut String) {
    let mut widths = heads.map(|h| h.chars().count());
    for r in body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 6], s: &mut String| {
        let mut l = String::from(" ");
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w - c.chars().count();
            if i == 0 || i == 5 {
                let _ = write!(l, " {c}{}", " ".repeat(pad));
            } else {
                let _ = write!(l, "  {}{c}", " ".repeat(pad));
            }
        }
        let _ = writeln!(s, "{}", l.trim_end());
    };
    line(heads, s);
    for r in body {
        line(r.each_ref().map(|c| c.as_str()), s);
    }
}

fn markdown(d: &Diff) -> String {
    let mut s = String::new();
    for p in &d.pairs {
        let _ = writeln!(s, "### {}\n", head(p));
        for l in verdict(p) {
            let _ = writeln!(s, "- {l}");
        }
        for dev in &p.devices {
            let _ = writeln!(s, "\n**{}**\n", device_title(dev));
            let _ = writeln!(s, "| | calls | bytes | time | median GB/s | |");
            let _ = writeln!(s, "|---|---:|---:|---:|---:|---|");
            for r in rows(dev) {
                let _ = writeln!(s, "| {} |", r.join(" | "));
            }
            for k in &dev.kernels {
                let _ = writeln!(
                    s,
                    "| kernel `{}` | {} | | {} | {} | {} |",
                    k.name,
                    cell(&k.calls, count),
                    cell(&k.device_ns, ns),
                    cell(&k.median_ns, ns),
                    k.device_ns.verdict.word()
                );
            }
            if let Some(b) = busy_line(dev) {
                let _ = writeln!(s, "\n{b}");
            }
        }
        let _ = writeln!(s, "\n<sub>noise: {NOISE}</sub>\n");
    }
    let mut rest = String::new();
    alone(d, &mut rest);
    for l in rest.lines() {
        let _ = writeln!(s, "- {l}");
    }
    s
}

/// One table: a row per figure of every pair (`program, device, what, figure, before, after,
/// verdict`), numbers raw (ns, bytes, GB/s).
fn csv(d: &Diff) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "program", "device", "what", "figure", "before", "after", "verdict",
    ]);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    for p in &d.pairs {
        let mut put = |device: String, what: String, figure: &str, f: &Figure| {
            let _ = w.write_record([
                p.program.clone(),
                device,
                what,
                figure.into(),
                num(f.before),
                num(f.after),
                f.verdict.word().into(),
            ]);
        };
        put(String::new(), "run".into(), "wall_ns", &p.wall_ns);
        for dev in &p.devices {
            let i = dev.index.to_string();
            for r in dev.transfers.iter().chain(&dev.operations) {
                let what = row_name(r);
                put(i.clone(), what.clone(), "calls", &r.calls);
                put(i.clone(), what.clone(), "bytes", &r.bytes);
                put(i.clone(), what.clone(), "time_ns", &r.time_ns);
                put(i.clone(), what, "median_gbps", &r.median_gbps);
            }
            for k in &dev.kernels {
                let what = format!("kernel {}", k.name);
                put(i.clone(), what.clone(), "calls", &k.calls);
                put(i.clone(), what.clone(), "device_ns", &k.device_ns);
                put(i.clone(), what, "median_ns", &k.median_ns);
            }
            put(i.clone(), "device".into(), "transfer_ns", &dev.transfer_ns);
            put(i.clone(), "device".into(), "busy_ns", &dev.busy_ns);
            put(i, "device".into(), "overlap_ns", &dev.overlap_ns);
        }
        for f in &p.findings {
            let fig = Figure {
                before: f.saving_before_ns.map(|v| v as f64),
                after: f.saving_after_ns.map(|v| v as f64),
                verdict: f.state,
            };
            put(
                f.device.to_string(),
                format!("finding {}", f.kind),
                "saving_ns",
                &fig,
            );
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
