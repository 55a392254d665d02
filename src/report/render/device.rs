//! What the report says of one device, beside its tables: its head line, projection, best
//! bandwidths, memory, busy time and overlap, sampled timing.

use super::super::{DeviceReport, Projection, QueueBusy};
use super::tables::WIDTH;
use crate::units::clip;
use crate::units::{bytes, duration, gbps};
use std::fmt::Write as _;

/// The projection stands in for the device's own times.
pub(super) fn replaced(d: &DeviceReport) -> bool {
    d.projection.as_ref().is_some_and(|p| p.replaces)
}

/// What a projection is, in a line above the tables.
pub(super) fn projection_line(p: &Projection) -> String {
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
pub(super) const COMPARED: [&str; 7] = [
    "dir",
    "path",
    "calls",
    "bytes",
    "measured",
    "projected",
    "projected/measured",
];

pub(super) fn compared(d: &DeviceReport) -> Vec<[String; 7]> {
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

pub(super) fn forced(d: &DeviceReport) -> bool {
    crate::model::rules::forced(&d.rules, &d.auto_rules)
}

pub(super) fn device_head(d: &DeviceReport) -> String {
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

pub(super) fn best(d: &DeviceReport) -> String {
    if d.best_pinned_gbps.is_empty() {
        // Migrations and launches pull at their move's speed, not the link's: not counted.
        return "best pinned: no pinned read, write, map or copy of 1 MiB or more".into();
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

pub(super) fn memory(d: &DeviceReport) -> String {
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
    // The findings' size where it is another: said beside, so that the two sizes of one report
    // are not taken for a contradiction.
    if let Some((b, whose)) = &d.judged_memory {
        let _ = write!(s, "; findings judge against {} ({whose})", bytes(*b));
    }
    s
}

/// The device's busy time, idle time, and the overlap of transfers with kernels.
pub(super) fn busy(d: &DeviceReport) -> Option<String> {
    let b = d.busy?;
    let share = if b.transfer_ns > 0 {
        format!(
            " ({:.0}% of the transfer time)",
            100.0 * b.overlap_ns as f64 / b.transfer_ns as f64
        )
    } else {
        String::new()
    };
    // Whole: `~` where it counts the commands sampling left untimed, at their estimate.
    let (mark, estimated) = match b.estimated_ns {
        0 => ("", String::new()),
        ns => (
            "~",
            format!(
                "; ~{} of it estimated for the commands sampling left untimed",
                duration(ns)
            ),
        ),
    };
    // Under forced rules, the run as projected: the tables' times, not this device's.
    let projected = match d.busy_projected {
        true => " (projected)",
        false => "",
    };
    let (t, k) = marks(&b);
    Some(format!(
        "busy{projected}: {mark}{} of a {} span (idle {mark}{}): transfers {t}{}, kernels {k}{}, \
         both at once {}{share}{estimated}",
        duration(b.busy_ns),
        duration(b.span_ns),
        duration(b.span_ns.saturating_sub(b.busy_ns)),
        duration(b.transfer_ns),
        duration(b.kernel_ns),
        duration(b.overlap_ns),
    ))
}

/// `~` on the transfers' and the kernels' figures where each has a part of the estimate.
fn marks(b: &crate::report::Busy) -> (&'static str, &'static str) {
    let mark = |part: bool| if part { "~" } else { "" };
    (
        mark(b.estimated_ns > b.estimated_kernel_ns),
        mark(b.estimated_kernel_ns > 0),
    )
}

/// `queue #2: busy ~971 µs (transfers ~971 µs, kernels 0 ns)`: `~` where its part of the
/// device's estimate for untimed commands is in.
pub(super) fn queue_busy(q: &QueueBusy) -> String {
    let b = &q.busy;
    let mark = if b.estimated_ns > 0 { "~" } else { "" };
    let (t, k) = marks(b);
    format!(
        "queue #{}: busy {mark}{} (transfers {t}{}, kernels {k}{})",
        q.queue,
        duration(b.busy_ns),
        duration(b.transfer_ns),
        duration(b.kernel_ns)
    )
}

/// A figure only a trace's end gives: "unknown" when the trace was cut short.
pub(super) fn known(figure: Option<String>) -> String {
    figure.unwrap_or_else(|| "unknown".into())
}

/// How the rows with calls sampled device timing left untimed were extrapolated: one line each.
pub(super) fn sampled(d: &DeviceReport) -> Vec<String> {
    let rows = d.transfers.iter().chain(&d.operations);
    let rows = rows.filter_map(|r| {
        // Projected to no time (a move the model has no link for, or none): nothing to add.
        let s = r
            .sampled
            .filter(|s| !(s.projected && s.estimated_ns == Some(0)))?;
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

/// When the migrations' bytes moved (the brief's "does migrate copy at call time?"), where the
/// device had migrations: `migrations: 2 moved their contents at the call (128 MiB), 1 only
/// marked its objects (the first command that uses them on the device moves them)`.
pub(super) fn migrations(d: &DeviceReport) -> Option<String> {
    if d.migrations.is_empty() {
        return None;
    }
    let parts: Vec<String> = (d.migrations.iter())
        .map(|m| {
            let calls = format!(
                "{} migration{}",
                m.calls,
                if m.calls == 1 { "" } else { "s" }
            );
            match m.moved.as_str() {
                "at the call" => format!(
                    "{calls} copied the contents at the call ({})",
                    bytes(m.bytes)
                ),
                "at first use" => format!(
                    "{calls} only marked the objects: the first command that uses them on the \
                     device moves the contents"
                ),
                _ => format!(
                    "{calls} moved nothing, as nothing needed moving (CONTENT_UNDEFINED, the \
                     contents already there, or one memory for host and device)"
                ),
            }
        })
        .collect();
    Some(format!(
        "when migrations moved their bytes: {}",
        parts.join("; ")
    ))
}

pub(super) fn timing(d: &DeviceReport) -> String {
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
    let failed = match d.failed {
        0 => String::new(),
        n => format!("; {n} failed (an error status: they moved nothing and are in no row)"),
    };
    format!(
        "timing: clock mapping {clock}; {} transfers without device time{beyond}{sampled}{failed}",
        d.without_device_time
    )
}
