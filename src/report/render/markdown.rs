//! The report as Markdown.

use super::super::Report;
use super::device::{
    COMPARED, best, busy, compared, device_head, known, memory, migrations, projection_line,
    queue_busy, replaced, sampled, timing,
};
use super::tables::{md_kernels, md_table};
use super::text::{bounds, header, minor, ranked};
use crate::units::bytes;
use std::fmt::Write as _;

pub(super) fn markdown(r: &Report) -> String {
    let mut out = format!("# {}\n\n", header(r));
    let verdict = r
        .verdict
        .lines(&r.verdict.moved, r.verdict.moved.len(), true);
    if let Some((first, rest)) = verdict.split_first() {
        let _ = writeln!(out, "**Verdict: {first}**\n");
        for line in rest {
            let _ = writeln!(out, "- {line}");
        }
    }
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
        if let Some(m) = migrations(d) {
            let _ = writeln!(out, "\n{}.", upper(&m));
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
    if let Some((head, rows, more)) = super::host::host_calls(r) {
        let _ = writeln!(out, "\n{}:\n", upper(&head));
        let _ = writeln!(out, "| {} |", super::host::HEADS.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(super::host::HEADS.len() - 1));
        for row in rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        if let Some(more) = more {
            let _ = writeln!(out, "\n{}.", upper(&more));
        }
    }
    if let Some(failed) = super::host::failed(r) {
        let _ = writeln!(out, "\n{}.", upper(&failed));
    }
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

pub(super) fn upper(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}
