//! Vendor rules AS DATA: one [`RuleSet`] per driver family, each rule with the id that reasons
//! cite, what it says, and its source (a row of `docs/sources/transfer-rules.md` or
//! `docs/sources/ground-truth-h200.md`; tags: \[X\] measured, \[S\] driver source, \[D\] vendor doc,
//! \[I\] inference).
//! `docs/RULES.md` is generated from these tables (`clxfer doctor --rules-markdown`).
//! The machinery is `set.rs`; each vendor's rules and cost model are a file of their own
//! (`nvidia.rs`, `amd.rs`, `intel.rs`, `cpu.rs`, `generic.rs`), sharing `shared.rs`. A vendor
//! joins [`SETS`], [`CHOICES`] and [`for_device`] here.

pub mod common;
mod set;
mod shared;

mod amd;
mod cpu;
mod generic;
mod intel;
mod nvidia;

pub use amd::AMD;
pub use cpu::CPU;
pub use generic::GENERIC;
pub use intel::{INTEL_CPU, INTEL_DGPU, INTEL_IGPU};
pub use nvidia::NVIDIA;
pub use set::*;

use super::cost::Cost;
use super::device::{DeviceKind, DeviceProfile};

/// Every rule set, in the order `CLXFER_RULES` lists them.
pub const SETS: &[&RuleSet] = &[
    &NVIDIA,
    &AMD,
    &INTEL_IGPU,
    &INTEL_DGPU,
    &INTEL_CPU,
    &CPU,
    &GENERIC,
];

/// The `CLXFER_RULES` words: `auto`, then every set.
pub const CHOICES: &[&str] = &[
    "auto",
    "nvidia",
    "amd",
    "intel-igpu",
    "intel-dgpu",
    "intel-cpu",
    "cpu",
    "generic",
];

pub fn by_name(name: &str) -> Option<&'static RuleSet> {
    SETS.iter().copied().find(|s| s.name == name)
}

/// Whether `rules` were forced (CLXFER_RULES) on a device for which `auto` picks another set:
/// then its times say nothing of the devices the rules describe.
pub fn forced(rules: &str, auto: &str) -> bool {
    !auto.is_empty() && auto != rules
}

/// Where the rules were forced on a device, the cost model that projects its transfers in place
/// of its own times: `Some(None)` when the rules have none (then its transfers have no time or
/// bandwidth at all); `None` where the rules are the device's own.
pub fn projecting(rules: &str, auto: &str) -> Option<Option<&'static Cost>> {
    forced(rules, auto).then(|| by_name(rules).and_then(|s| s.cost.as_ref()))
}

/// The set `auto` picks for a device: by vendor id or name, then by type and unified memory.
pub fn for_device(dev: &DeviceProfile) -> &'static RuleSet {
    let vendor = dev.vendor.to_ascii_lowercase();
    let is = |id: u32, word: &str| dev.vendor_id == id || vendor.contains(word);
    match dev.kind {
        DeviceKind::Cpu if is(0x8086, "intel") && !dev.platform.contains("Portable") => &INTEL_CPU,
        DeviceKind::Cpu => &CPU,
        _ if is(0x10de, "nvidia") => &NVIDIA,
        _ if is(0x1002, "advanced micro devices") || vendor.contains("amd") => &AMD,
        _ if is(0x8086, "intel") && dev.host_unified => &INTEL_IGPU,
        _ if is(0x8086, "intel") => &INTEL_DGPU,
        _ => &GENERIC,
    }
}

/// Entry points programs are told to call that no OpenCL implementation has, with why
/// (docs/sources/transfer-rules.md section 6).
pub const NO_SUCH_FUNCTIONS: &[(&str, &str)] = &[(
    "clEnqueueMemObjectRegisterKHR",
    "cl_khr_host_register does not exist: no such entry point in the Khronos registry's cl.xml \
     or in CL/cl_ext.h (docs/sources/transfer-rules.md section 6 [S])",
)];

/// What registers host memory with an OpenCL driver in fact (docs/sources/transfer-rules.md section 6).
pub const HOST_REGISTRATION: &str = "a CL_MEM_ALLOC_HOST_PTR buffer mapped once and used as the \
    host side of transfers, CL_MEM_USE_HOST_PTR over the program's own memory (registered by \
    NVIDIA, ROCm and PoCL-CUDA), SVM or USM host allocations (clSVMAlloc, clHostMemAllocINTEL), \
    or clImportMemoryARM on ARM";

/// Why `name` exists nowhere, if it is one of [`NO_SUCH_FUNCTIONS`].
pub fn no_such_function(name: &str) -> Option<&'static str> {
    NO_SUCH_FUNCTIONS.iter().find(|f| f.0 == name).map(|f| f.1)
}

/// Looks up a rule by id across every set and the common rules (for docs and tests).
pub fn find(id: &str) -> Option<(&'static str, &'static str)> {
    common::ALL
        .iter()
        .map(|r| (r.id, r.says))
        .chain(
            SETS.iter()
                .flat_map(|s| s.rows().map(|(id, says, _)| (id, says))),
        )
        .find(|(rid, _)| *rid == id)
}

/// `docs/RULES.md`, generated from the tables above (a test checks the file matches).
pub fn markdown() -> String {
    use std::fmt::Write as _;
    let clean = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::from(
        "# Transfer rules\n\nGenerated from `src/model/rules/` by `clxfer doctor --rules-markdown`; \
         do not edit. Every reason clxfer gives names one of these ids. Sources are rows of \
         [docs/sources/transfer-rules.md](sources/transfer-rules.md) (each with its own public \
         source: a driver repository at a commit, a vendor's guide, the specification) and \
         [docs/sources/ground-truth-h200.md](sources/ground-truth-h200.md) (measured with \
         [docs/sources/xferprobe.c](sources/xferprobe.c)); tags: [X] measured, [S] driver \
         source, [D] vendor doc, [M] maintainer, [I] inference.\n\n## Paths and directions\n\n\
         | Word | Meaning |\n|---|---|\n",
    );
    use super::classification::{Direction, Path};
    for (word, meaning) in Path::DOCS.iter().chain(Direction::DOCS) {
        let _ = writeln!(out, "| `{word}` | {meaning} |");
    }
    out.push_str(
        "\n## Rules every set shares\n\n| Rule | What it says | Source |\n|---|---|---|\n",
    );
    for r in common::ALL {
        let _ = writeln!(out, "| `{}` | {} | {} |", r.id, clean(r.says), r.source);
    }
    for set in SETS {
        let _ = write!(
            out,
            "\n## `{}`: {}\n\n| Rule | What it says | Source |\n|---|---|---|\n",
            set.name, set.title
        );
        let extra = (set.borrowed_times.iter().chain(&set.early_complete))
            .map(|r| (r.id, r.says, r.source));
        for (id, says, source) in set.rows().into_iter().chain(extra) {
            let _ = writeln!(out, "| `{id}` | {} | {} |", clean(says), clean(source));
        }
        let _ = writeln!(
            out,
            "\nPinned recipe (the report's fix for staged transfers): {}.",
            set.recipe
        );
        if set.callback_gap_us > 0 {
            let _ = writeln!(
                out,
                "Device timing: at most one completion callback per queue every {} µs, and \
                 none within that of the program's last wait on the queue (its waits collect); \
                 each collects every command completed by then (callbacks are dear on this \
                 driver: docs/PERFORMANCE.md).",
                set.callback_gap_us
            );
        }
        if let Some(c) = set.cost {
            let _ = writeln!(
                out,
                "\nCost model (the report's projections under forced rules, and its estimates \
                 when a run measured no pinned transfer), measured on {}: a command takes the \
                 floor plus its bytes at the link's bandwidth for its size (interpolated between the sizes \
                 listed, on a log scale).\n\n| figure | value | \
                 source |\n|---|---|---|",
                c.on
            );
            for (name, l) in c.links() {
                let _ = writeln!(out, "| {name} | {} | {} |", l.describe(), l.source);
            }
            if let Some(f) = c.enqueue_us {
                let _ = writeln!(
                    out,
                    "| a non-blocking enqueue's time in the call | {} µs | {} |",
                    f.value, f.source
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_prefixed() {
        let mut seen = HashSet::new();
        for r in common::ALL {
            assert!(r.id.starts_with("any."), "{}", r.id);
            assert!(seen.insert(r.id), "duplicate {}", r.id);
        }
        for set in SETS {
            for (id, says, source) in set.rows() {
                assert!(
                    id.starts_with(&format!("{}.", set.name)),
                    "{id} in {}",
                    set.name
                );
                assert!(seen.insert(id), "duplicate {id}");
                assert!(!says.is_empty() && !source.is_empty(), "{id}");
            }
        }
    }

    #[test]
    fn choices_cover_every_set() {
        assert_eq!(CHOICES[0], "auto");
        let names: Vec<_> = SETS.iter().map(|s| s.name).collect();
        assert_eq!(&CHOICES[1..], names.as_slice());
        for name in names {
            assert_eq!(by_name(name).unwrap().name, name);
        }
        assert!(by_name("auto").is_none());
    }

    #[test]
    fn auto_picks_by_vendor_and_type() {
        let dev = |vendor: &str, id: u32, kind: DeviceKind, unified: bool, platform: &str| {
            DeviceProfile {
                vendor: vendor.into(),
                vendor_id: id,
                kind,
                host_unified: unified,
                platform: platform.into(),
                ..DeviceProfile::unknown(1)
            }
        };
        let pocl = "Portable Computing Language";
        let cases = [
            (
                dev(
                    "NVIDIA Corporation",
                    0x10de,
                    DeviceKind::Gpu,
                    false,
                    "NVIDIA CUDA",
                ),
                "nvidia",
            ),
            (
                dev(
                    "Advanced Micro Devices, Inc.",
                    0x1002,
                    DeviceKind::Gpu,
                    false,
                    "AMD",
                ),
                "amd",
            ),
            (
                dev("AuthenticAMD", 0x1002, DeviceKind::Gpu, false, "AMD"),
                "amd",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Gpu,
                    true,
                    "Intel",
                ),
                "intel-igpu",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Gpu,
                    false,
                    "Intel",
                ),
                "intel-dgpu",
            ),
            (
                dev(
                    "Intel(R) Corporation",
                    0x8086,
                    DeviceKind::Cpu,
                    true,
                    "Intel(R) OpenCL",
                ),
                "intel-cpu",
            ),
            (
                dev("GenuineIntel", 0x8086, DeviceKind::Cpu, true, pocl),
                "cpu",
            ),
            (
                dev("AuthenticAMD", 0x1022, DeviceKind::Cpu, true, pocl),
                "cpu",
            ),
            (
                dev("ARM", 0x13b5, DeviceKind::Gpu, true, "ARM Platform"),
                "generic",
            ),
            (dev("", 0, DeviceKind::Other, false, ""), "generic"),
        ];
        for (d, want) in cases {
            assert_eq!(for_device(&d).name, want, "{d:?}");
        }
    }

    #[test]
    fn placement_follows_flags_and_alignment() {
        use Placement::{Device, Host};
        use opencl_sys::{CL_MEM_ALLOC_HOST_PTR as AHP, CL_MEM_USE_HOST_PTR as UHP};
        let cases: &[(&RuleSet, u64, usize, u64, Placement)] = &[
            (&NVIDIA, 0, 0, 4096, Device),
            (&NVIDIA, AHP, 0, 4096, Device),
            (&NVIDIA, UHP, 4096, 4096, Device),
            (&AMD, AHP, 0, 4096, Host),
            (&AMD, UHP, 4097, 100, Host),
            (&AMD, 0, 0, 4096, Device),
            (&INTEL_DGPU, AHP, 0, 4096, Device),
            (&INTEL_IGPU, 0, 0, 4096, Host),
            (&INTEL_CPU, UHP, 128, 256, Host),
            (&CPU, 0, 0, 1, Host),
            (&GENERIC, AHP, 0, 4096, Device),
        ];
        for &(set, flags, ptr, size, want) in cases {
            assert_eq!(
                set.placement(flags, ptr, size, 128).0,
                want,
                "{} {flags:#x}",
                set.name
            );
        }
        // USE_HOST_PTR zero-copy only when aligned (Intel); the device's base alignment when 0.
        let mut odd = INTEL_DGPU.use_host_ptr;
        odd.value = UseHostPtr::ZeroCopyIfAligned(64);
        let set = RuleSet {
            use_host_ptr: odd,
            ..clone_of(&INTEL_DGPU)
        };
        assert_eq!(set.placement(UHP, 64, 128, 0).0, Host);
        assert_eq!(set.placement(UHP, 65, 128, 0).0, Device);
        assert_eq!(set.placement(UHP, 64, 100, 0).0, Device);
        let mut base = odd;
        base.value = UseHostPtr::ZeroCopyIfAligned(0);
        let set = RuleSet {
            use_host_ptr: base,
            ..clone_of(&INTEL_DGPU)
        };
        assert_eq!(set.placement(UHP, 128, 256, 128).0, Host);
        assert_eq!(set.placement(UHP, 64, 256, 128).0, Device);
    }

    fn clone_of(s: &RuleSet) -> RuleSet {
        RuleSet { ..*s }
    }

    #[test]
    fn markdown_lists_every_rule() {
        let md = markdown();
        for set in SETS {
            for (id, ..) in set.rows() {
                assert!(md.contains(&format!("`{id}`")));
            }
        }
        assert!(find("nvidia.pageable").is_some());
        assert!(find("any.mapped").is_some());
        assert!(find("nope").is_none());
    }
}
