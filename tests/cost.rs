//! What clxfer adds, counted where this VM's clock cannot: the PoCL storm of small transfers
//! (tests/programs/storm.c: 4 KiB writes, reads, maps and unmaps, non-blocking, a finish every
//! 256) under callgrind, every thread (the driver's too), in summary mode with the race check on,
//! sampled at one command in ten (about the storm's native rate here). Instructions added per
//! enqueue: the runs of 2n and n enqueues, less the same without clxfer, over n (start-up and
//! exit cancel out); the median of three such pairs each way.
//!
//! A guard against regressions, above what the build measures here (2,528 to 2,612 in five
//! paired runs on 4 Dec 2026; one pair moves by ~60 as valgrind schedules PoCL's workers).
//! Issue #42's target, 2,500, is `scripts/bench instructions`'s figure (the native sampling
//! rate, 8,000 and 16,000 enqueues: docs/PERFORMANCE.md), which a run here could not hold to
//! without failing on noise.
//!
//! The same runs check the report's own-cost line: the share of clxfer's cost it puts on the
//! driver (`driver_ns` beside clxfer's own time) against the share callgrind counts (every
//! thread's added instructions less clxfer's own, `scripts/bench.py`'s `clxfer_own`), within 2×
//! (issue #42): callgrind's driver instructions priced at what clxfer's own instructions were
//! measured to take.

mod common;

use common::root;
use std::process::Command;

/// Instructions added per enqueue that fail the guard: a regression's size above the noise. On
/// 2026-12-06, idle, the figure read 2,709 before issue #57 and 2,712 to 2,751 after it (six
/// runs; the calling thread's share unchanged since 12-05, `scripts/bench instructions`): the
/// median of three pairs still moves by ~40 with how valgrind schedules PoCL's workers, whose
/// own count moves by 100-180 (docs/PERFORMANCE.md), so the guard sits that far above.
const GUARD: f64 = 2_900.0;
const N: u64 = 4_000;

/// Every thread's instructions for a storm of `n` enqueues, under clxfer in summary mode or not,
/// and of them clxfer's own.
fn instructions(storm: &std::path::Path, n: u64, clxfer: bool) -> (u64, u64) {
    let dir = common::fresh_dir("cost");
    let out = dir.join("callgrind.out");
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--separate-threads=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(storm)
        .args([n.to_string(), "1".into()]);
    for (k, _) in std::env::vars() {
        if k.starts_with("CLXFER_") || k == "OPENCL_LAYERS" || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    // glibc's per-thread cache large enough that PoCL's frees never spill (they move its counts
    // by hundreds an enqueue between runs otherwise; scripts/bench.py says more).
    cmd.env("GLIBC_TUNABLES", "glibc.malloc.tcache_count=1000")
        .env("CLXFER_DIR", &dir);
    if clxfer {
        cmd.env("OPENCL_LAYERS", root().join("target/release/libclxfer.so"))
            .env("CLXFER_MODE", "summary")
            .env("CLXFER_TEST_SAMPLE_EVERY", "10");
    }
    let run = cmd.output().expect("valgrind (scripts/setup installs it)");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let collected = stderr
        .lines()
        .find_map(|l| l.split("Collected : ").nth(1))
        .unwrap_or_else(|| panic!("no total in callgrind's output: {stderr}"));
    (collected.trim().parse().unwrap(), own_instructions(&out))
}

/// clxfer's own instructions in a callgrind file, counted as `scripts/bench` counts them (one
/// place for the rule: its functions' own cost and their calls into the C library).
fn own_instructions(callgrind: &std::path::Path) -> u64 {
    let count = Command::new("python3")
        .current_dir(root())
        .args([
            "-c",
            "import sys; f = sys.argv[1]; sys.argv = ['bench']; sys.path.insert(0, 'scripts'); \
             import bench; print(bench.clxfer_own(open(f, errors='replace').read()))",
        ])
        .arg(callgrind)
        .output()
        .expect("python3");
    assert!(count.status.success(), "{count:?}");
    String::from_utf8_lossy(&count.stdout)
        .trim()
        .parse()
        .unwrap()
}

/// The report's (driver's share, clxfer's own time on the program's and its writer's threads),
/// ns, for a storm of `n` enqueues run natively, sampled as under callgrind.
fn reported_shares(storm: &std::path::Path, n: u64) -> (f64, f64) {
    let dir = common::fresh_dir("cost-report");
    let report = dir.join("report.json");
    let run = Command::new(storm)
        .args([n.to_string(), "1".into()])
        .env("OPENCL_LAYERS", root().join("target/release/libclxfer.so"))
        .env("CLXFER_MODE", "summary")
        .env("CLXFER_TEST_SAMPLE_EVERY", "10")
        .env("CLXFER_REPORT", &report)
        .env("CLXFER_DIR", &dir)
        .output()
        .expect("the storm");
    assert!(run.status.success(), "{run:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let o = &r["overhead"];
    let ns = |k: &str| o[k].as_f64().unwrap_or_else(|| panic!("{k} in {o}"));
    (ns("driver_ns"), ns("layer_ns") + ns("writer_cpu_ns"))
}

#[test]
fn summary_mode_on_a_storm_keeps_within_its_guard_and_states_the_drivers_share() {
    /// How far callgrind's count of the driver's share moves between runs of one build,
    /// instructions per enqueue.
    const DRIVER_COUNT_SPREAD: f64 = 180.0;
    let lib = root().join("target/release/libclxfer.so");
    assert!(
        lib.exists(),
        "{} missing: run `cargo build --release` (scripts/test does)",
        lib.display()
    );
    let storm = common::program("storm");
    // (every thread, clxfer's own) per enqueue.
    let added = |clxfer| {
        let (a, b) = (
            instructions(&storm, N, clxfer),
            instructions(&storm, 2 * N, clxfer),
        );
        let per = |x: u64, y: u64| (y - x) as f64 / N as f64;
        (per(a.0, b.0), per(a.1, b.1))
    };
    // Three pairs each way, the median of each figure: one pair's count moves with how
    // valgrind schedules PoCL's workers (by ~190 instructions an enqueue without clxfer, and
    // the driver's share with it from -47 to +155, seen in single pairs), the median far less.
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let none = median((0..3).map(|_| added(false).0).collect());
    let runs: Vec<(f64, f64)> = (0..3).map(|_| added(true)).collect();
    let with = median(runs.iter().map(|r| r.0).collect());
    let own = median(runs.iter().map(|r| r.1).collect());
    let driver = median(runs.iter().map(|r| r.0 - none - r.1).collect());
    let summary = with - none;
    eprintln!(
        "PoCL storm: {none:.0} instructions per enqueue without clxfer, +{summary:.0} in summary mode"
    );
    // Not nothing: the count is of clxfer's work (a layer that failed to load adds ~0).
    assert!(summary > 500.0, "{summary}");
    assert!(
        summary <= GUARD,
        "summary mode adds {summary:.0} instructions per enqueue, over the guard of {GUARD}"
    );
    // The driver's share as callgrind counts it, and as the report states it: five native
    // runs, their median (this VM's clock is noisy; the count is not).
    let counted = driver / own;
    let mut stated: Vec<f64> = (0..5)
        .map(|_| {
            let (driver, clxfer) = reported_shares(&storm, 10 * N);
            driver / clxfer
        })
        .collect();
    stated.sort_by(f64::total_cmp);
    // How far the five native runs' own statements spread: timed on this machine, they move
    // with its load (a driver call that waits for PoCL's busy workers), which callgrind does
    // not count.
    let spread = stated[4] - stated[0];
    let stated = stated[2];
    eprintln!(
        "driver's share of clxfer's cost: callgrind {:.1}% ({:.0} of {summary:.0} instructions \
         per enqueue), the report {:.1}% (median of five runs)",
        100.0 * counted,
        driver,
        100.0 * stated
    );
    // Within 2x, or within what callgrind itself can tell (PoCL's worker threads wake as
    // valgrind schedules them, which moves one pair's driver count by up to ~200 instructions
    // per enqueue between runs of one build; seen: -47 to +155 at a clxfer cost of ~2,500)
    // and the native runs' own spread (seen on a busy machine: 9.7% stated against 1.8%
    // counted, with 7.2% resolved).
    let resolution = DRIVER_COUNT_SPREAD / own;
    assert!(
        (0.5..=2.0).contains(&(stated / counted))
            || (stated - counted).abs() <= resolution + spread,
        "the report puts {:.1}% of clxfer's cost on the driver, callgrind counts {:.1}% (it \
         resolves {:.1}%; the native runs spread {:.1}%)",
        100.0 * stated,
        100.0 * counted,
        100.0 * resolution,
        100.0 * spread
    );
}
