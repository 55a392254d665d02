//! Every transfer of a real program on PoCL gets a path and the reasons for it: the CPU rules
//! (`auto`), and the NVIDIA and AMD rules forced with CLXFER_RULES, which must reproduce the
//! ground-truth table (../shared/docs/ground-truth-h200.md) scenario by scenario.

mod common;

use common::*;
use std::collections::BTreeMap;

/// One classification line: "DIR path bytes [host span] blocking|non-blocking [error N]", and
/// the rule ids it cites.
#[derive(Debug, Clone, PartialEq)]
struct Class {
    api: String,
    class: String,
    rules: Vec<String>,
}

/// Runs the scenario program with two PoCL devices and `CLXFER_LOG=debug`; returns each
/// scenario's classification (exactly one per scenario) and the run.
fn scenarios(load: Load, rules: &str) -> (BTreeMap<String, Class>, Run) {
    let env = [
        ("POCL_DEVICES", "pthread pthread"),
        ("CLXFER_LOG", "debug"),
        ("CLXFER_RULES", rules),
    ];
    let r = run(program("transfers"), load, &env);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("devices 2"), "{}", r.stdout);
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in r.stderr.lines() {
        if let Some(name) = line.strip_prefix("scenario: ") {
            current = Some(name.to_string());
            continue;
        }
        let Some(rest) = line.strip_prefix("clxfer: clEnqueue") else {
            continue;
        };
        let Some((api, class)) = rest.split_once(" on device #") else {
            continue;
        };
        let class = class.split_once(": ").unwrap().1;
        let summary = class.split(';').next().unwrap().to_string();
        let rules = class
            .split("; [")
            .skip(1)
            .map(|r| r.split(']').next().unwrap().to_string())
            .collect();
        let name = current
            .clone()
            .unwrap_or_else(|| panic!("unlabelled transfer: {line}"));
        if name == "setup" {
            continue;
        }
        let entry = Class {
            api: format!("clEnqueue{api}"),
            class: summary,
            rules,
        };
        assert!(
            out.insert(name.clone(), entry).is_none(),
            "two transfers in scenario {name}"
        );
    }
    (out, r)
}

/// (scenario, "DIR path bytes-as-printed", rule ids that must be cited).
type Expect = &'static [(&'static str, &'static str, &'static [&'static str])];

fn check(got: &BTreeMap<String, Class>, expect: Expect, rules: &str) {
    let mut wrong = Vec::new();
    for &(name, class, cites) in expect {
        match got.get(name) {
            None => wrong.push(format!("{name}: no classification")),
            Some(c) => {
                let want = class.to_string();
                let missing: Vec<_> = cites
                    .iter()
                    .filter(|r| !c.rules.iter().any(|g| g == *r))
                    .collect();
                if !c.class.starts_with(&want) || !missing.is_empty() {
                    wrong.push(format!("{name}: want {want} citing {cites:?}, got {c:?}"));
                }
            }
        }
    }
    // Only the locked buffer is said to be locked.
    let locked: Vec<_> = got
        .iter()
        .filter(|(_, c)| c.rules.iter().any(|r| r == "any.mlocked"))
        .map(|(k, _)| k.as_str())
        .filter(|&k| k != "mlock-write")
        .collect();
    assert!(locked.is_empty(), "{rules}: said to be mlock'd: {locked:?}");
    let unexpected: Vec<_> = got
        .keys()
        .filter(|k| !expect.iter().any(|e| e.0 == k.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{rules}: scenarios without an expectation: {unexpected:?}"
    );
    assert!(wrong.is_empty(), "{rules}:\n{}", wrong.join("\n"));
}

/// ground-truth-h200.md, as the NVIDIA rules must see it.
const NVIDIA: Expect = &[
    (
        "malloc-write",
        "H2D staged 1.00 MiB blocking",
        &["any.pageable", "nvidia.pageable"],
    ),
    ("malloc-read", "D2H staged 1.00 MiB", &["nvidia.pageable"]),
    (
        "mlock-write",
        "H2D staged",
        &["nvidia.pageable", "any.mlocked"],
    ),
    (
        "nonblocking-write",
        "H2D staged 1.00 MiB non-blocking",
        &["nvidia.nonblocking"],
    ),
    (
        "map-ahp",
        "D2H pinned 1.00 MiB",
        &["nvidia.alloc-host-ptr", "nvidia.map"],
    ),
    ("mapped-write", "H2D pinned", &["any.mapped"]),
    ("mapped-offset-write", "H2D pinned 512 KiB", &["any.mapped"]),
    ("mapped-read", "D2H pinned", &["any.mapped"]),
    ("unmap-ahp", "H2D pinned 1.00 MiB", &["nvidia.map"]),
    ("uhp-range-write", "H2D pinned", &["nvidia.registered"]),
    (
        "past-uhp-write",
        "H2D staged",
        &["any.pageable", "nvidia.pageable"],
    ),
    (
        "into-uhp-write",
        "H2D staged",
        &["nvidia.use-host-ptr", "nvidia.pageable"],
    ),
    (
        "into-ahp-write",
        "H2D staged",
        &["nvidia.alloc-host-ptr", "nvidia.pageable"],
    ),
    ("svm-write", "H2D pinned", &["any.svm"]),
    ("svm-memcpy-from-malloc", "H2D staged", &["nvidia.pageable"]),
    (
        "sub-buffer-write",
        "H2D staged 8.00 KiB",
        &["any.sub-buffer", "nvidia.pageable"],
    ),
    (
        "rect-write",
        "H2D staged 16.0 KiB (host span 63.2 KiB)",
        &["any.rect"],
    ),
    ("map-read", "D2H pinned 1.00 MiB", &["nvidia.map"]),
    ("unmap-read", "H2D none 0 B", &["any.read-only-unmap"]),
    ("map-write", "D2H pinned 1.00 MiB", &["nvidia.map"]),
    ("unmap-write", "H2D pinned 1.00 MiB", &["nvidia.map"]),
    ("map-invalidate", "D2H none 0 B", &["any.invalidate"]),
    ("unmap-invalidate", "H2D pinned 1.00 MiB", &["nvidia.map"]),
    ("copy", "D2D device", &["any.device-copy"]),
    (
        "copy-from-ahp",
        "D2D device",
        &["nvidia.alloc-host-ptr", "any.device-copy"],
    ),
    ("fill", "D2D device", &["any.fill"]),
    (
        "migrate-to-host",
        "D2H pinned 1.00 MiB",
        &["nvidia.migrate"],
    ),
    ("migrate-back", "H2D pinned 1.00 MiB", &["nvidia.migrate"]),
    (
        "migrate-undefined",
        "H2D none 0 B",
        &["any.content-undefined"],
    ),
    ("migrate-fresh", "H2D none 0 B", &["any.no-contents"]),
    ("image-write", "H2D staged 16.0 KiB", &["nvidia.pageable"]),
    (
        "invalid-write",
        "H2D unknown 0 B blocking error -38",
        &["any.driver-error"],
    ),
    (
        "migrate-between-devices",
        "D2D via-host 1.00 MiB",
        &["nvidia.between-devices"],
    ),
    (
        "copy-between-devices",
        "D2D via-host 1.00 MiB",
        &["nvidia.between-devices"],
    ),
    (
        "kernel-first-use",
        "D2D via-host 1.00 MiB",
        &["any.first-use"],
    ),
    ("after-release-uhp-write", "H2D staged", &["any.pageable"]),
    ("done", "D2H staged", &["nvidia.pageable"]),
];

/// PoCL's CPU device: every transfer is a host memcpy; map/unmap and migration move nothing.
const CPU: Expect = &[
    ("malloc-write", "H2D host-copy 1.00 MiB", &["cpu.memory"]),
    ("malloc-read", "D2H host-copy", &["cpu.memory"]),
    ("mlock-write", "H2D host-copy", &["cpu.memory"]),
    (
        "nonblocking-write",
        "H2D host-copy 1.00 MiB non-blocking",
        &["cpu.memory"],
    ),
    ("map-ahp", "D2H zero-copy 0 B", &["cpu.memory"]),
    (
        "mapped-write",
        "H2D host-copy",
        &["any.mapped", "cpu.memory"],
    ),
    ("mapped-offset-write", "H2D host-copy", &["any.mapped"]),
    ("mapped-read", "D2H host-copy", &["any.mapped"]),
    ("unmap-ahp", "H2D zero-copy 0 B", &["cpu.memory"]),
    ("uhp-range-write", "H2D host-copy", &["cpu.registered"]),
    ("past-uhp-write", "H2D host-copy", &["any.pageable"]),
    ("into-uhp-write", "H2D host-copy", &["cpu.memory"]),
    ("into-ahp-write", "H2D host-copy", &["cpu.memory"]),
    ("svm-write", "H2D host-copy", &["any.svm"]),
    ("svm-memcpy-from-malloc", "H2D host-copy", &["cpu.memory"]),
    ("sub-buffer-write", "H2D host-copy", &["any.sub-buffer"]),
    (
        "rect-write",
        "H2D host-copy 16.0 KiB (host span 63.2 KiB)",
        &["any.rect"],
    ),
    ("map-read", "D2H zero-copy 0 B", &["cpu.memory"]),
    ("unmap-read", "H2D zero-copy 0 B", &["cpu.memory"]),
    ("map-write", "D2H zero-copy 0 B", &["cpu.memory"]),
    ("unmap-write", "H2D zero-copy 0 B", &["cpu.memory"]),
    ("map-invalidate", "D2H zero-copy 0 B", &["cpu.memory"]),
    ("unmap-invalidate", "H2D zero-copy 0 B", &["cpu.memory"]),
    ("copy", "D2D device", &["cpu.memory"]),
    ("copy-from-ahp", "D2D device", &["cpu.memory"]),
    ("fill", "D2D device", &["any.fill"]),
    ("migrate-to-host", "D2H none 0 B", &["cpu.memory"]),
    ("migrate-back", "H2D none 0 B", &["cpu.memory"]),
    (
        "migrate-undefined",
        "H2D none 0 B",
        &["any.content-undefined"],
    ),
    ("migrate-fresh", "H2D none 0 B", &["cpu.memory"]),
    ("image-write", "H2D host-copy 16.0 KiB", &["cpu.memory"]),
    ("invalid-write", "H2D unknown 0 B", &["any.driver-error"]),
    (
        "migrate-between-devices",
        "D2D none 0 B",
        &["cpu.between-devices"],
    ),
    (
        "copy-between-devices",
        "D2D none 0 B",
        &["cpu.between-devices"],
    ),
    (
        "after-release-uhp-write",
        "H2D host-copy",
        &["any.pageable"],
    ),
    ("done", "D2H host-copy", &["cpu.memory"]),
];

/// AMD: ALLOC_HOST_PTR lives in host memory, flags-0 migration is a marker, the move happens when
/// the kernel first uses the buffer.
const AMD: Expect = &[
    ("malloc-write", "H2D staged 1.00 MiB", &["amd.pageable"]),
    ("malloc-read", "D2H staged", &["amd.pageable"]),
    (
        "mlock-write",
        "H2D staged",
        &["amd.pageable", "any.mlocked"],
    ),
    ("nonblocking-write", "H2D staged", &["amd.pageable"]),
    (
        "map-ahp",
        "D2H zero-copy 0 B",
        &["amd.alloc-host-ptr", "any.host-resident"],
    ),
    ("mapped-write", "H2D pinned", &["any.mapped"]),
    ("mapped-offset-write", "H2D pinned", &["any.mapped"]),
    ("mapped-read", "D2H pinned", &["any.mapped"]),
    ("unmap-ahp", "H2D zero-copy 0 B", &["amd.alloc-host-ptr"]),
    ("uhp-range-write", "H2D pinned", &["amd.registered"]),
    ("past-uhp-write", "H2D staged", &["amd.pageable"]),
    ("into-uhp-write", "H2D host-copy", &["amd.use-host-ptr"]),
    ("into-ahp-write", "H2D host-copy", &["amd.alloc-host-ptr"]),
    ("svm-write", "H2D pinned", &["any.svm"]),
    ("svm-memcpy-from-malloc", "H2D staged", &["amd.pageable"]),
    ("sub-buffer-write", "H2D staged", &["any.sub-buffer"]),
    ("rect-write", "H2D staged", &["any.rect"]),
    ("map-read", "D2H pinned 1.00 MiB", &["amd.map"]),
    ("unmap-read", "H2D none 0 B", &["any.read-only-unmap"]),
    ("map-write", "D2H none 0 B", &["amd.map"]),
    ("unmap-write", "H2D pinned 1.00 MiB", &["amd.map"]),
    ("map-invalidate", "D2H none 0 B", &["any.invalidate"]),
    ("unmap-invalidate", "H2D pinned", &["amd.map"]),
    ("copy", "D2D device", &["any.device-copy"]),
    (
        "copy-from-ahp",
        "H2D pinned 1.00 MiB",
        &["amd.alloc-host-ptr"],
    ),
    ("fill", "D2D device", &["any.fill"]),
    ("migrate-to-host", "D2H staged", &["amd.migrate"]),
    ("migrate-back", "H2D none 0 B", &["amd.migrate"]),
    ("migrate-undefined", "H2D", &["amd.migrate"]),
    ("migrate-fresh", "H2D none 0 B", &["any.no-contents"]),
    ("image-write", "H2D staged", &["amd.pageable"]),
    ("invalid-write", "H2D unknown", &["any.driver-error"]),
    ("migrate-between-devices", "H2D none 0 B", &["amd.migrate"]),
    (
        "copy-between-devices",
        "D2D via-host",
        &["amd.between-devices"],
    ),
    (
        "kernel-first-use",
        "D2D via-host 1.00 MiB",
        &["any.first-use", "amd.between-devices"],
    ),
    ("after-release-uhp-write", "H2D staged", &["any.pageable"]),
    ("done", "D2H staged", &["amd.pageable"]),
];

#[test]
fn nvidia_rules_reproduce_the_ground_truth_table() {
    let (got, _) = scenarios(Load::Layer, "nvidia");
    check(&got, NVIDIA, "nvidia");
    assert_eq!(got["malloc-write"].api, "clEnqueueWriteBuffer");
    assert_eq!(got["svm-memcpy-from-malloc"].api, "clEnqueueSVMMemcpy");
}

#[test]
fn cpu_device_transfers_are_host_memcpys_under_auto_rules() {
    let (got, r) = scenarios(Load::Layer, "auto");
    check(&got, CPU, "auto");
    assert!(r.stderr.contains("rules cpu (auto)"), "{}", r.stderr);
    // The exit report counts transfers by path.
    let totals = r
        .stderr
        .lines()
        .find(|l| l.starts_with("clxfer: transfers: "))
        .unwrap();
    assert!(totals.contains(" classified: zero-copy "), "{totals}");
}

#[test]
fn amd_rules_defer_flag_zero_migrations_to_first_use() {
    let (got, _) = scenarios(Load::Preload, "amd");
    check(&got, AMD, "amd");
}

/// "device #N memory (R rules): buffers X now, peak Y, of Z" → Y in bytes.
fn device_peak(r: &Run, device: u32) -> f64 {
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with(&format!("clxfer: device #{device} memory (")))
        .unwrap_or_else(|| panic!("no memory line for device #{device}:\n{}", r.stderr));
    let peak = line
        .split("peak ")
        .nth(1)
        .unwrap()
        .split(", of")
        .next()
        .unwrap();
    let (n, unit) = peak.split_once(' ').unwrap();
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        other => panic!("unit {other}"),
    };
    n.parse::<f64>().unwrap() * scale
}

#[test]
fn device_memory_is_counted_by_the_vendor_rules() {
    // NVIDIA: ALLOC_HOST_PTR and USE_HOST_PTR buffers take device memory; on AMD they do not.
    let (_, nvidia) = scenarios(Load::Layer, "nvidia");
    let (_, amd) = scenarios(Load::Layer, "amd");
    let (nv1, amd1) = (device_peak(&nvidia, 1), device_peak(&amd, 1));
    assert!(nv1 >= 4.0 * 1048576.0, "nvidia device #1 peak {nv1}");
    assert!(nv1 - amd1 >= 2.0 * 1048576.0, "nvidia {nv1} vs amd {amd1}");
    // Migration moved a buffer to device #2, the kernel another.
    assert!(device_peak(&nvidia, 2) >= 2.0 * 1048576.0);
    assert!(
        nvidia
            .stderr
            .contains("clxfer: pinned or registered host memory: peak ")
    );
}

#[test]
fn classification_is_the_same_in_every_loading_mode_and_results_do_not_change() {
    let plain = run(
        program("transfers"),
        Load::None,
        &[("POCL_DEVICES", "pthread pthread")],
    );
    let (layer, r1) = scenarios(Load::Layer, "nvidia");
    let (preload, r2) = scenarios(Load::Preload, "nvidia");
    let (both, r3) = scenarios(Load::Both, "nvidia");
    assert_eq!(layer, preload);
    assert_eq!(layer, both);
    for r in [r1, r2, r3] {
        assert_eq!(
            r.stdout, plain.stdout,
            "clxfer changed the program's results"
        );
        assert!(!r.stderr.contains("internal error"), "{}", r.stderr);
    }
}
