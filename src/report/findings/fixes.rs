//! The ways to give the program a pinned host side, each checked by the device's own rules
//! before it is offered (issue #57): what it pins, what device memory it takes against the memory
//! the findings judge by, and what host memory; one the rules would flag (over the memory, not
//! pinned) is named as refused, with why.

use super::judge::*;
use crate::model::device::HOST_IMPORTS;
use crate::model::rules::{Placement, UseHostPtr};
use crate::units::bytes;

/// What a pinned host side is wanted for: the bytes of the program's region (its transfers'
/// bytes, at least), its transfer size and how many of its transfers ran at once, per direction
/// (H2D, D2H).
pub(super) struct Want {
    pub region: u64,
    /// `region` is the host bytes the staged transfers reached, each once (the trace's
    /// `staged_region_bytes`), not the bytes they moved.
    pub reached: bool,
    pub block: [u64; 2],
    pub in_flight: [u64; 2],
    /// The program's region is already host-visible memory that takes device memory (its own
    /// finding): a fix replaces it rather than adds to it, and the same kind is no fix.
    pub replaces: Option<(&'static str, u64)>,
}

/// A fix offered: its sentence, and the device memory it takes.
pub(super) struct Offer {
    pub text: String,
    pub device_bytes: u64,
}

/// The candidates, best first (least memory for the same replayed saving), then those refused:
/// one sentence each.
pub(super) fn checked(j: &Judge, want: &Want) -> (Vec<Offer>, Vec<String>) {
    let (d, set) = (j.d, j.set);
    let (budget, whose) = d.facts.memory(set);
    let used = d.end.as_ref().map_or(0, |e| e.resident_peak);
    // What the program takes already, less what the fix would replace.
    let base = used.saturating_sub(want.replaces.map_or(0, |r| r.1));
    let room = |extra: u64| budget == 0 || base.saturating_add(extra) <= budget;
    let over = |extra: u64| {
        format!(
            "{} of device memory beside the program's {} is more than the {} ({whose})",
            bytes(extra),
            bytes(base),
            bytes(budget)
        )
    };
    let (mut offered, mut refused) = (Vec::new(), Vec::new());
    let offer = |text: String, device_bytes: u64| Offer { text, device_bytes };
    // A region known only by what its transfers reached (or, from an older trace, moved) is at
    // least that.
    let (region, least) = match (want.replaces, want.reached) {
        (Some(_), _) => (bytes(want.region), ""),
        (None, true) => (
            format!("{} of it reached by these transfers", bytes(want.region)),
            "at least ",
        ),
        (None, false) => (format!("{} moved from it", bytes(want.region)), "at least "),
    };
    // The program's own memory imported, where the device offers it: used in place.
    if let Some((name, how)) = (HOST_IMPORTS.iter()).find(|(n, _)| *n == d.facts.host_import) {
        offered.push(offer(
            format!(
                "the program's own region ({region}) imported, as device #{} reports {name} \
                 ({how}): the device uses the pages in place, pinned (any.imported), no host or \
                 device memory more",
                d.facts.index
            ),
            0,
        ));
    }
    // The program's own memory, registered: no copy, no new memory.
    let uhp = format!(
        "a CL_MEM_USE_HOST_PTR buffer over the program's own region ({region}), created once \
         and used only for its pointer: the driver registers (pins) the pages ({}.registered)",
        set.name
    );
    match (set.registered.value, set.use_host_ptr.value) {
        (true, UseHostPtr::DeviceCopy) => offered.push(offer(
            format!(
                "{uhp}; no host memory more, and no device memory while the buffer itself is never \
                 enqueued, mapped or passed to a kernel: then its device storage is made, \
                 {least}{} ({}.use-host-ptr)",
                bytes(want.region),
                set.name
            ),
            0,
        )),
        (true, _) => offered.push(offer(format!("{uhp}; no host or device memory more"), 0)),
        (false, _) => refused.push(format!(
            "USE_HOST_PTR over the program's region: the {} rules do not pin it ({}.registered)",
            set.name, set.name
        )),
    }
    // A ring of mapped ALLOC_HOST_PTR blocks per direction, of its transfer size: as many as
    // ran at once, one queued behind them (the device never waits for the host's copy) and one
    // filling; three of the larger block where nothing ran timed.
    let rings: Vec<(&str, u64, u64)> = (["H2D", "D2H"].into_iter())
        .zip(want.in_flight)
        .zip(want.block)
        .filter(|((_, n), b)| *n > 0 && *b > 0)
        .map(|((dir, n), b)| (dir, n + 2, b))
        .collect();
    let rings = match rings.is_empty() {
        true => vec![("", 3, want.block.into_iter().max().unwrap_or(0))],
        false => rings,
    };
    let depth: u64 = rings.iter().map(|r| r.1).sum();
    let ring: u64 = (rings.iter()).map(|r| r.1.saturating_mul(r.2)).sum();
    let ring_device = match set.alloc_host_ptr.value {
        Placement::Device => ring,
        Placement::Host => 0,
    };
    let blocks = match (rings.as_slice(), want.in_flight) {
        ([(_, _, b)], [0, 0]) => format!("{}; one moving, one queued, one filling", bytes(*b)),
        ([(_, n, b)], _) => format!(
            "{}; {} moving at once at most, as the program's queues ran them, one queued, one \
             filling",
            bytes(*b),
            n - 2
        ),
        (parts, _) => {
            let each: Vec<String> = (parts.iter())
                .map(|(dir, n, b)| format!("{dir} {n} of {}", bytes(*b)))
                .collect();
            format!(
                "{}: per direction as many as the program's queues ran at once, one queued and \
                 one filling",
                each.join(", ")
            )
        }
    };
    let ring_text = format!(
        "a ring of {depth} mapped CL_MEM_ALLOC_HOST_PTR buffers of the program's transfer \
         size ({blocks}), the program copying each block in and out on the host: {} of pinned \
         host memory{}",
        bytes(ring),
        match ring_device {
            0 => String::new(),
            n => format!(
                " and {} of device memory ({}.alloc-host-ptr)",
                bytes(n),
                set.name
            ),
        }
    );
    match room(ring_device) {
        _ if want.replaces.is_some_and(|r| r.0 == "ALLOC_HOST_PTR") && ring >= want.region => {}
        true => offered.push(offer(ring_text, ring_device)),
        false => refused.push(format!("{ring_text}: {}", over(ring_device))),
    }
    // Coarse-grain SVM for the whole region.
    let svm_device = match set.svm.value {
        Placement::Device => want.region,
        Placement::Host => 0,
    };
    let svm_text = format!(
        "coarse-grain SVM (clSVMAlloc) for the region: {}",
        match svm_device {
            0 => format!("host memory, pinned ({}.svm)", set.name),
            n => format!(
                "{least}{} of device memory at allocation ({}.svm)",
                bytes(n),
                set.name
            ),
        }
    );
    if let Some((now, _)) = want.replaces.filter(|_| svm_device > 0) {
        if now != "SVM" {
            refused.push(format!(
                "{svm_text}: as much device memory as the {now} region it would replace"
            ));
        }
    } else if room(svm_device) {
        offered.push(offer(svm_text, svm_device));
    } else {
        refused.push(format!("{svm_text}: {}", over(svm_device)));
    }
    // They pin alike, so save alike (the replay): the least memory first.
    offered.sort_by_key(|o| o.device_bytes);
    (offered, refused)
}

/// The checked candidates as a fix's sentences: "Checked against …: 1. …; 2. …. Not offered: …".
/// `alike`: what the offers have in common ("each pins the host side, …").
pub(super) fn sentence(j: &Judge, alike: &str, offered: &[Offer], refused: &[String]) -> String {
    let (budget, whose) = j.d.facts.memory(j.set);
    let mut s = format!(
        "Checked by the {} rules against {} of device memory ({whose}; --device-memory to \
         judge another card); {alike}, the least memory first:",
        j.set.name,
        bytes(budget)
    );
    for (i, o) in offered.iter().enumerate() {
        s.push_str(&format!(" {}. {}.", i + 1, o.text));
    }
    if !refused.is_empty() {
        s.push_str(&format!(" Not offered: {}.", refused.join("; ")));
    }
    s
}
