//! The finding on what host-visible buffers cost in device memory (ALLOC_HOST_PTR buffers that
//! also take device memory), with the staging recipe that fits the program.

use super::super::acc::DeviceAcc;
use super::judge::*;
use crate::model::rules::RuleSet;
use crate::units::{bytes, gbps};

/// ALLOC_HOST_PTR buffers that also take device memory.
pub(super) fn alloc_host_ptr(j: &mut Judge) {
    let (d, set) = (j.d, j.set);
    let on = j.on.clone();
    let mut push = |kind, title, evidence, fix, saving_ns, estimate| {
        j.push(kind, title, evidence, fix, (saving_ns, estimate))
    };
    let (ahp, all, buffers) = d.end.as_ref().map_or((0, 0, 0), |e| {
        (
            e.alloc_host_ptr_peak,
            e.resident_peak,
            e.alloc_host_ptr_buffers,
        )
    });
    if ahp > 0 && !set.unified.value {
        let of = if d.facts.global_mem > 0 {
            format!(
                " of {} ({:.1}%)",
                bytes(d.facts.global_mem),
                100.0 * ahp as f64 / d.facts.global_mem as f64
            )
        } else {
            String::new()
        };
        push(
            "alloc-host-ptr-device-memory",
            format!(
                "ALLOC_HOST_PTR buffers also took {} of device memory on {on}",
                bytes(ahp)
            ),
            vec![
                format!(
                    "peak {}{of}; all buffers together peaked at {}",
                    bytes(ahp),
                    bytes(all)
                ),
                format!("{} ({}.alloc-host-ptr)", set.alloc_host_ptr.says, set.name),
            ],
            staging_advice(d, set, ahp, buffers),
            0,
            "saves device memory, not time".into(),
        );
    }
}

/// The staging recipe that fits the program (issue #26, question 2 of the brief): a ring of two
/// or three mapped ALLOC_HOST_PTR buffers sized to the transfers it makes from mapped memory,
/// whether it now has one large staging region or one per data buffer, and the alternatives.
fn staging_advice(d: &DeviceAcc, set: &RuleSet, ahp: u64, buffers: u64) -> String {
    let block = d.from_mapped.bytes.checked_div(d.from_mapped.count);
    let now = match buffers {
        0 | 1 => format!("The program's ALLOC_HOST_PTR buffer ({}) costs", bytes(ahp)),
        n => format!(
            "The program's {n} ALLOC_HOST_PTR buffers ({}) cost",
            bytes(ahp)
        ),
    };
    let ring = match block {
        // A ring smaller than what the program has now.
        Some(b) if b > 0 && b.saturating_mul(3) < ahp => format!(
            "{now} as much device memory again on this device; a ring of three mapped staging \
             buffers of the program's transfer block ({}, the mean of its {} from mapped \
             memory) would take {}, used in turn so that one fills while another transfers.",
            bytes(b),
            counted(d.from_mapped.count, "transfer"),
            bytes(b.saturating_mul(3))
        ),
        Some(_) => format!(
            "{now} as much device memory again on this device; its staging already fits its \
             transfers ({} from mapped memory): keep two or three such buffers at most.",
            counted(d.from_mapped.count, "transfer")
        ),
        None => format!(
            "{now} as much device memory again on this device; stage through a ring of two or \
             three mapped buffers sized to one transfer, not one buffer per data buffer."
        ),
    };
    // Each option's speed, by the rules' cost model (every one is a pinned path on a bus).
    let speed = match set.cost.and_then(|c| c.pinned[0]) {
        Some(l) => format!(
            ", each moving at the pinned {} GB/s of the {} cost model (docs/RULES.md)",
            gbps(l.peak()),
            set.name
        ),
        None => String::new(),
    };
    format!(
        "{ring} Or: CL_MEM_USE_HOST_PTR over the program's own memory ({}); or \
         coarse-grain SVM (clSVMAlloc: {}){speed}.",
        set.use_host_ptr.says, set.svm.says
    )
}
