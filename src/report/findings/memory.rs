//! The findings on what host-visible memory costs in device memory: ALLOC_HOST_PTR buffers, and
//! SVM or USM allocations, that also take device memory by the vendor's rules (issue #57: judged
//! alike), against the device memory the user means; with the fixes that fit, checked.

use super::fixes::{Want, checked, sentence};
use super::judge::*;
use crate::units::bytes;

/// ALLOC_HOST_PTR buffers, and SVM or USM allocations, that also take device memory.
pub(super) fn host_visible(j: &mut Judge) {
    let (d, set) = (j.d, j.set);
    let Some(e) = d.end.as_ref() else {
        return;
    };
    if set.unified.value {
        return;
    }
    let (budget, whose) = d.facts.memory(set);
    let all = e.resident_peak;
    let of = |b: u64| match budget {
        0 => String::new(),
        n => format!(
            " of {} ({:.1}%, {whose})",
            bytes(n),
            100.0 * b as f64 / n as f64
        ),
    };
    // On the card the user means, the program's allocations would fail.
    let fails = budget > 0 && all > budget;
    let over = match fails {
        true => format!(
            ", more than the {} it has ({whose}): there the program's allocations fail",
            bytes(budget)
        ),
        false => String::new(),
    };
    let block = d.from_mapped.bytes.checked_div(d.from_mapped.count);
    let on = j.on.clone();
    for (kind, what, peak, rule) in [
        (
            FindingKind::AllocHostPtrDeviceMemory,
            "ALLOC_HOST_PTR buffers also took",
            e.alloc_host_ptr_peak,
            (set.alloc_host_ptr.says, "alloc-host-ptr"),
        ),
        (
            FindingKind::SvmDeviceMemory,
            "SVM allocations the host uses took",
            e.svm_peak,
            (set.svm.says, "svm"),
        ),
    ] {
        if peak == 0 {
            continue;
        }
        let now = match kind {
            FindingKind::SvmDeviceMemory => "SVM",
            _ => "ALLOC_HOST_PTR",
        };
        let evidence = vec![
            format!(
                "peak {}{}; all buffers and allocations together peaked at {}",
                bytes(peak),
                of(peak),
                bytes(all)
            ),
            format!("{} ({}.{})", rule.0, set.name, rule.1),
        ];
        // A ring of the transfer block in its place, and the program's own memory registered.
        let want = Want {
            region: peak,
            reached: false,
            block: [block.unwrap_or(peak).min(peak); 2],
            in_flight: d.most_in_flight(),
            replaces: Some((now, peak)),
        };
        let (offered, refused) = checked(j, &want);
        let first = offered.first().map(|c| c.device_bytes);
        let fix = format!(
            "The program's {now} region ({}) takes device memory of its size on this device. {}",
            bytes(peak),
            sentence(
                j,
                "each frees the region's device memory less what it takes itself",
                &offered,
                &refused
            )
        );
        let estimate = match fails {
            true => format!("saves device memory, not time: {}", bytes(peak)),
            false => "saves device memory, not time".into(),
        };
        let title = format!("{what} {} of device memory on {on}{over}", bytes(peak));
        j.push(kind, title, evidence, fix, (0, estimate));
        // The first fix offered (the region registered, or the ring) frees the region less what
        // it takes itself.
        j.frees(peak.saturating_sub(first.unwrap_or(peak)));
    }
}
