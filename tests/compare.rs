//! `clxfer diff`, `clxfer check --require` and the progress bar (issue #43), on PoCL through the
//! real loader: the brief's pipeline ported from CUDA (tests/programs/pipeline.c), staged and
//! fixed, under NVIDIA's rules (their cost model projects its transfers, so its figures repeat).

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn clxfer(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG");
    cmd.env_remove("CLXFER_DIR");
    cmd.envs(env.iter().copied());
    cmd.args(args);
    run_cmd(cmd, Duration::from_secs(180))
}

/// The JSON report of a summary-mode run of `program args` (`rules`: CLXFER_RULES), written into
/// `dir` as `name`.
fn report_of(program: &str, args: &[&str], rules: &str, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let mut cmd = common::command(common::program(program), Load::Layer);
    cmd.args(args);
    cmd.env("CLXFER_MODE", "summary");
    cmd.env("CLXFER_RULES", rules);
    cmd.env("CLXFER_REPORT", &out);
    cmd.env("POCL_DEVICES", "pthread pthread");
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(
        r.code,
        Some(0),
        "{program} {args:?}: {}{}",
        r.stdout,
        r.stderr
    );
    assert!(out.exists(), "{program} wrote no report: {}", r.stderr);
    out
}

fn pipeline(variant: &str, rules: &str, dir: &Path, name: &str) -> PathBuf {
    report_of("pipeline", &[variant], rules, dir, name)
}

fn diff_json(before: &Path, after: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["diff", "--format", "json"];
    args.extend_from_slice(extra);
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    args.extend([b, a]);
    let r = clxfer(&args, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

fn verdicts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(s)) = o.get("verdict") {
                out.push(s.clone());
            }
            o.values().for_each(|x| verdicts(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| verdicts(x, out)),
        _ => {}
    }
}

#[test]
fn diff_names_the_staged_transfers_moved_to_pinned_the_findings_gone_and_the_saving_realised() {
    let dir = fresh_dir("diff-fix");
    let before = pipeline("staged", "nvidia", &dir, "staged.report.json");
    let after = pipeline("pinned", "nvidia", &dir, "pinned.report.json");
    let d = diff_json(&before, &after, &[]);
    let pair = &d["pairs"][0];
    assert_eq!(pair["program"], "pipeline");
    // Mixed, by the cost model: the staged transfers' findings went as promised, but the fixed
    // program's one unmap of its 16 MiB ALLOC_HOST_PTR region writes the region back to the
    // device (313 µs projected), more than the 8 MiB each way saved (issue #57 sizes the fix).
    assert_eq!(pair["overall"], "changed", "{pair}");
    let dev = &pair["devices"][0];
    assert_eq!(dev["projected"], "nvidia", "{dev}");
    // 8 chunks of 1 MiB each way: every staged byte of the reads and writes went pinned.
    let moved: Vec<(String, String, String, u64)> = (dev["moved"].as_array().unwrap().iter())
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_string();
            (
                s("direction"),
                s("from"),
                s("to"),
                m["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    for dir in ["H2D", "D2H"] {
        assert!(
            moved.contains(&(dir.into(), "staged".into(), "pinned".into(), 8 << 20)),
            "{dir}: {moved:?}"
        );
    }
    let staged_rows = (dev["transfers"].as_array().unwrap().iter())
        .filter(|r| r["path"] == "staged")
        .count();
    assert_eq!(staged_rows, 2);
    for r in dev["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "staged")
    {
        assert_eq!(r["bytes"]["verdict"], "gone", "{r}");
    }
    // The staged finding went: one for both directions and the held calls (issue #57).
    let findings = pair["findings"].as_array().unwrap();
    let gone = |kind: &str| {
        (findings.iter())
            .filter(|f| f["state"] == "gone" && f["kind"] == kind)
            .count()
    };
    assert_eq!(gone("staged-pageable"), 1, "{findings:?}");
    // What the fix costs: the ALLOC_HOST_PTR region's device memory.
    assert!(
        findings
            .iter()
            .any(|f| f["state"] == "new" && f["kind"] == "alloc-host-ptr-device-memory"),
        "{findings:?}"
    );

    // The text says it first: the verdict before the tables.
    let r = clxfer(
        &["diff", before.to_str().unwrap(), after.to_str().unwrap()],
        &[],
    );
    let text = &r.stdout;
    let verdict = text.find("verdict:").expect(text);
    let table = text.find("device #1 ·").expect(text);
    assert!(verdict < table, "{text}");
    let head = &text[verdict..table];
    for says in [
        "gone: 16 transfers from mlock'd memory (pageable to the driver) were staged",
        "moved on device #1: D2H 8.00 MiB staged → pinned; H2D 8.00 MiB staged → pinned",
        "new: ALLOC_HOST_PTR buffers also took 16.0 MiB of device memory",
        "transfer time on device #1 (projected: the nvidia cost model)",
    ] {
        assert!(head.contains(says), "{says:?} not in:\n{head}");
    }
    // Markdown for a pull request, and one CSV table.
    let md = clxfer(
        &[
            "diff",
            "--format",
            "md",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        md.stdout.starts_with("### clxfer diff · pipeline"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout.contains("| H2D staged | 8 → - |"),
        "{}",
        md.stdout
    );
    let csv = clxfer(
        &[
            "diff",
            "--format",
            "csv",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
        ],
        &[],
    );
    let mut lines = csv.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("program,device,what,figure,before,after,verdict")
    );
    assert!(
        csv.stdout
            .lines()
            .any(|l| l == "pipeline,1,H2D staged,bytes,8388608,,gone"),
        "{}",
        csv.stdout
    );

    // Traces, in either format, say the same as the reports.
    let traces = fresh_dir("diff-traces");
    for (variant, format) in [("staged", "json"), ("pinned", "perfetto")] {
        let mut cmd = common::command(common::program("pipeline"), Load::Layer);
        cmd.arg(variant);
        cmd.env("CLXFER_RULES", "nvidia");
        cmd.env("CLXFER_FORMAT", format);
        cmd.env("CLXFER_DIR", traces.join(variant));
        std::fs::create_dir_all(traces.join(variant)).unwrap();
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
    }
    let t = diff_json(&traces.join("staged"), &traces.join("pinned"), &[]);
    assert_eq!(t["pairs"][0]["devices"][0]["moved"], dev["moved"], "{t}");
}

/// The brief's third question: the hand-off with HOST migrations against the fixed one (flags 0 on
/// the target's queue), two PoCL devices under NVIDIA's rules. Both move the buffer through the
/// host at the same projected cost; the fix removes the two misuses and the diff calls it better,
/// not worse for the move that came in place of the two legs that went.
/// Issue #57, item 6: the promise is kept. Each variant of the port (four chunks of 64 MiB each
/// way, under NVIDIA's rules) against the same program with the first fix its finding offers (a
/// USE_HOST_PTR buffer over its own region). As written (mlock'd): the staged finding goes, and
/// the critical path, less the host's own time, is shorter by what it promised, within 10%
/// (chunks of 64 MiB: what the fix saves is mostly the transfers' time, 6 and 10 against 54
/// GB/s, which the cost model gives the same on any machine, not PoCL's kernels or host). ALLOC_HOST_PTR and SVM regions: the device-memory finding goes, and the device's peak
/// falls by what it promised to free, within 10%.
#[test]
fn the_first_fix_saves_what_its_finding_promised() {
    let dir = fresh_dir("promise");
    let run = |variant: &str| {
        let name = format!("{variant}.report.json");
        report_of(
            "pipeline",
            &[variant, "4", "64", "0", "light"],
            "nvidia",
            &dir,
            &name,
        )
    };
    let after = run("uhp");
    for (variant, kind) in [
        ("staged", "staged-pageable"),
        ("pinned", "alloc-host-ptr-device-memory"),
        ("svm", "svm-device-memory"),
    ] {
        let before = run(variant);
        let d = diff_json(&before, &after, &[]);
        let findings = d["pairs"][0]["findings"].as_array().unwrap().clone();
        let ours: Vec<&Value> = findings.iter().filter(|f| f["kind"] == kind).collect();
        assert_eq!(ours.len(), 1, "{variant}: {findings:?}");
        let f = ours[0];
        assert_eq!(f["state"], "gone", "{variant}: {f}");
        let (promised, kept) = match kind {
            "staged-pageable" => (f["saving_before_ns"].as_f64().unwrap(), &f["realised"]),
            _ => (f["freed"]["promised_bytes"].as_f64().unwrap(), &f["freed"]),
        };
        let got = kept
            .get("saved_ns")
            .or(kept.get("freed_bytes"))
            .and_then(Value::as_f64)
            .unwrap();
        assert!(promised > 0.0, "{variant}: {f}");
        let off = (got - promised).abs() / promised;
        assert!(
            off <= clxfer::compare::findings::PROMISE_TOLERANCE,
            "{variant}: {f}"
        );
        assert_eq!(kept["as_promised"], true, "{variant}: {f}");
        // The fix made nothing new to find, but for what it uncovers: with the calls no longer
        // holding the host, the copy queue's order is what keeps the uploads from overlapping
        // the kernels (the port keeps its read-backs on the uploads' queue).
        assert!(
            (findings.iter()).all(|f| f["state"] != "new" || f["kind"] == "queue-order"),
            "{variant}: {findings:?}"
        );
    }
}

/// Issue #57: the port's variants, judged against the 4 GiB card the user means
/// (`--device-memory`), under NVIDIA's rules. As written (mlock'd): one finding, whose fix is
/// sized and checked (USE_HOST_PTR over the region first, then a ring of the 16 MiB block);
/// coarse-grain SVM for a 5 GiB region: a device-memory finding that says it does not fit;
/// USE_HOST_PTR over the region, its read-backs on a queue of their own: nothing to find.
#[test]
fn each_variant_of_the_port_is_judged_against_the_card_meant() {
    let dir = fresh_dir("variants");
    let report = |args: &[&str], read_queue: &str| -> Value {
        let out = dir.join(format!("{}.report.json", args.join("-")));
        let mut all = vec![
            "run",
            "--summary",
            "--rules",
            "nvidia",
            "--device-memory",
            "4GiB",
        ];
        let out_s = out.to_str().unwrap().to_string();
        let prog = common::program("pipeline").to_str().unwrap().to_string();
        all.extend(["--report", &out_s, "--", &prog]);
        all.extend(args);
        let env = [
            ("POCL_DEVICES", "pthread"),
            ("PIPELINE_READ_QUEUE", read_queue),
        ];
        let r = clxfer(&all, &env);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let kinds = |r: &Value| -> Vec<String> {
        (r["findings"].as_array().unwrap().iter())
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let staged = report(&["staged", "4", "16"], "0");
    assert_eq!(
        kinds(&staged),
        ["staged-pageable"],
        "{}",
        staged["findings"]
    );
    let fix = staged["findings"][0]["fix"].as_str().unwrap();
    let uhp = fix.find("1. a CL_MEM_USE_HOST_PTR buffer").expect(fix);
    let ring = fix
        .find("2. a ring of 6 mapped CL_MEM_ALLOC_HOST_PTR buffers of the program's transfer size (H2D 3 of 16.0 MiB, D2H 3 of 16.0 MiB")
        .expect(fix);
    assert!(uhp < ring, "{fix}");
    assert!(
        fix.contains("against 4.00 GiB of device memory (as given"),
        "{fix}"
    );
    assert!(fix.contains("96.0 MiB of device memory"), "{fix}");
    // The device's own size and the one the findings judge against, both said.
    let d = &staged["devices"][0];
    assert_eq!(
        d["judged_memory"],
        serde_json::json!([4u64 << 30, "as given"]),
        "{d}"
    );
    assert!(d["global_mem_bytes"].as_u64().unwrap() != 4 << 30, "{d}");

    let svm = report(&["svm", "4", "16", "5120"], "0");
    assert!(
        kinds(&svm).contains(&"svm-device-memory".to_string()),
        "{svm}"
    );
    let f = (svm["findings"].as_array().unwrap().iter())
        .find(|f| f["kind"] == "svm-device-memory")
        .unwrap();
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("5.00 GiB of device memory") && title.contains("more than the 4.00 GiB"),
        "{title}"
    );
    // Its fix offers no SVM, and the region registered first.
    let fix = f["fix"].as_str().unwrap();
    assert!(fix.contains("1. a CL_MEM_USE_HOST_PTR buffer"), "{fix}");
    assert!(!fix.contains("coarse-grain SVM"), "{fix}");

    // With its read-backs on a queue of their own (else: queue-order, `tests/report.rs`).
    let clean = report(&["uhp", "4", "16"], "1");
    assert_eq!(kinds(&clean), Vec::<String>::new(), "{}", clean["findings"]);
}

/// Issue #57: a host-memory import the device reports is checked and offered first. The test
/// ICD's device reports cl_arm_import_memory; its USM memcpys from malloc'd memory are staged
/// under NVIDIA's rules, and the staged finding's fix imports the program's own region first,
/// before the registered region and the ring, against the H200's measured memory (no size given).
#[test]
fn a_host_import_the_device_reports_is_offered_first() {
    let dir = fresh_dir("import");
    let out = dir.join("usm.report.json");
    let mut cmd = common::command(common::program("storm"), Load::Layer);
    cmd.args(["200", "1", "usm"])
        .env("OCL_ICD_VENDORS", common::vendors_dir(true))
        .env("TEST_PLATFORM", "clxfer test ICD")
        .env("CLXFER_MODE", "summary")
        .env("CLXFER_RULES", "nvidia")
        .env("CLXFER_REPORT", &out);
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let f = (report["findings"].as_array().unwrap().iter())
        .find(|f| f["kind"] == "staged-pageable")
        .unwrap_or_else(|| panic!("{}", report["findings"]));
    let fix = f["fix"].as_str().unwrap();
    let at = |s: &str| fix.find(s).unwrap_or_else(|| panic!("{s:?} not in {fix}"));
    assert!(
        at(
            // 200 writes and reads of one 4 KiB block: 800 KiB moved, 4 KiB reached.
            "1. the program's own region (4.00 KiB of it reached by these transfers) imported, as device #1 reports cl_arm_import_memory"
        ) < at("2. a CL_MEM_USE_HOST_PTR buffer"),
        "{fix}"
    );
    assert!(at("a ring of") > 0, "{fix}");
    assert!(
        fix.contains("against 140 GiB of device memory (the nvidia rules' card"),
        "{fix}"
    );
    // USM device memory is the device's, not memory the host uses: no finding on it.
    assert!(
        (report["findings"].as_array().unwrap().iter()).all(|f| f["kind"] != "svm-device-memory"),
        "{}",
        report["findings"]
    );
}

#[test]
fn diff_of_the_host_hand_off_against_the_fixed_one_says_better() {
    let dir = fresh_dir("diff-handoff");
    let before = report_of("handoff", &["host"], "nvidia", &dir, "host.report.json");
    let after = report_of(
        "handoff",
        &["correct"],
        "nvidia",
        &dir,
        "correct.report.json",
    );
    let d = diff_json(&before, &after, &[]);
    let pair = &d["pairs"][0];
    assert_eq!(pair["overall"], "better", "{pair}");
    let gone_misuses = (pair["findings"].as_array().unwrap().iter())
        .filter(|f| f["state"] == "gone" && f["misuse"] == true)
        .count();
    assert_eq!(gone_misuses, 2, "{pair}");
    for dev in pair["devices"].as_array().unwrap() {
        assert_eq!(dev["transfer_ns"]["verdict"], "same", "{dev}");
    }
    let text = clxfer(
        &["diff", before.to_str().unwrap(), after.to_str().unwrap()],
        &[],
    )
    .stdout;
    let first = text.lines().find(|l| l.contains("overall:")).unwrap();
    assert!(first.contains("better (2 misuses gone"), "{text}");
    assert!(text.contains("nothing got worse"), "{text}");
    assert!(!text.contains("worse:"), "{text}");
}

#[test]
fn diff_of_two_runs_of_one_program_reports_no_change_beyond_noise() {
    let dir = fresh_dir("diff-same");
    // Measured (PoCL's own rules: its times are this noisy VM's) and projected (NVIDIA's).
    for rules in ["auto", "nvidia"] {
        let a = pipeline("staged", rules, &dir, &format!("{rules}-a.report.json"));
        let b = pipeline("staged", rules, &dir, &format!("{rules}-b.report.json"));
        let d = diff_json(&a, &b, &[]);
        let mut vs = Vec::new();
        verdicts(&d, &mut vs);
        assert!(vs.len() > 10, "{d}");
        for v in &vs {
            assert!(
                ["same", "noise", "unjudged"].contains(&v.as_str()),
                "{rules}: a change between two runs of one program: {v} in {d}"
            );
        }
        assert!(
            d["pairs"][0]["findings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["state"] == "same")
        );
        assert_eq!(d["pairs"][0]["overall"], "same", "{d}");
        let text = clxfer(&["diff", a.to_str().unwrap(), b.to_str().unwrap()], &[]).stdout;
        assert!(text.contains("nothing got worse"), "{text}");
        assert!(
            text.contains("overall: no change beyond the noise"),
            "{text}"
        );
        for not in ["gone:", "new:", "worse:", "moved on"] {
            assert!(!text.contains(not), "{rules}: {not:?} in\n{text}");
        }
    }
}

#[test]
fn diff_of_different_programs_says_so_and_pairs_by_name_or_by_hand() {
    let dir = fresh_dir("diff-other");
    let (b, a) = (dir.join("before"), dir.join("after"));
    std::fs::create_dir_all(&b).unwrap();
    std::fs::create_dir_all(&a).unwrap();
    pipeline("staged", "nvidia", &b, "pipeline.report.json");
    report_of("staging", &[], "nvidia", &a, "staging.report.json");
    // One program each side: compared as different programs, by device and path.
    let d = diff_json(&b, &a, &[]);
    let pair = &d["pairs"][0];
    assert_eq!(
        (pair["program"].as_str(), pair["program_after"].as_str()),
        (Some("pipeline"), Some("staging"))
    );
    assert!(
        !pair["devices"][0]["transfers"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let text = clxfer(&["diff", b.to_str().unwrap(), a.to_str().unwrap()], &[]).stdout;
    assert!(
        text.contains("different programs: pipeline before, staging after"),
        "{text}"
    );

    // With a third program on each side, named alike on neither: paired only by hand.
    report_of("transfers", &[], "nvidia", &b, "transfers.report.json");
    report_of("demo", &[], "nvidia", &a, "demo.report.json");
    let d = diff_json(&b, &a, &[]);
    assert_eq!(d["pairs"].as_array().unwrap().len(), 0, "{d}");
    assert_eq!(d["only_before"].as_array().unwrap().len(), 2, "{d}");
    let text = clxfer(&["diff", b.to_str().unwrap(), a.to_str().unwrap()], &[]).stdout;
    assert!(
        text.contains("only before: pipeline") && text.contains("--pair BEFORE=AFTER"),
        "{text}"
    );
    let d = diff_json(&b, &a, &["--pair", "pipeline=staging"]);
    let pairs: Vec<(&str, &str)> = (d["pairs"].as_array().unwrap().iter())
        .map(|p| {
            (
                p["program"].as_str().unwrap(),
                p["program_after"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [("pipeline", "staging"), ("transfers", "demo")],
        "{d}"
    );
    let bad = clxfer(
        &[
            "diff",
            "--pair",
            "nonsense",
            b.to_str().unwrap(),
            a.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    let missing = clxfer(&["diff", "/nonexistent", a.to_str().unwrap()], &[]);
    assert_eq!(missing.code, Some(2));
    assert_eq!(missing.stderr.lines().count(), 1, "{}", missing.stderr);
}

#[test]
fn each_rule_of_the_guard_passes_and_fails_and_a_malformed_one_is_exit_2() {
    let dir = fresh_dir("guard");
    let staged = pipeline("staged", "nvidia", &dir, "staged.report.json");
    let pinned = pipeline("pinned", "nvidia", &dir, "pinned.report.json");
    let race = report_of("races", &["race"], "auto", &dir, "race.report.json");
    let none = dir.join("none.report.json");
    let mut without: clxfer::report::Report =
        serde_json::from_str(&std::fs::read_to_string(&pinned).unwrap()).unwrap();
    without.findings.clear();
    std::fs::write(&none, serde_json::to_string(&without).unwrap()).unwrap();
    let (s, p, x, n) = (
        staged.to_str().unwrap(),
        pinned.to_str().unwrap(),
        race.to_str().unwrap(),
        none.to_str().unwrap(),
    );
    // A share of the wall time: the staged run's projected transfers (the cost model's, the same
    // on any machine: between 200 and 500 us, as the absolute cases below hold) against its own
    // wall time, which the machine's load moves; so the thresholds are made from that wall time
    // (a share of a PoCL run's measured transfers moved from 0.85% to 3% with the load).
    let wall_ns =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&staged).unwrap())
            .unwrap()["wall_ns"]
            .as_f64()
            .expect("wall_ns");
    let share = |us: f64| format!("transfer_time>={:.6}%", 100.0 * us * 1e3 / wall_ns);
    let (share_holds, share_breaks) = (share(200.0), share(600.0));
    // (rule, a run it holds for, a run it breaks for, the baseline if it compares); each figure
    // of the vocabulary has a case that holds and one that breaks.
    type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let cases: &[Case] = &[
        ("no race", Some(s), Some(x), None),
        ("no misuse", Some(p), Some(x), None),
        // The held calls are the staged finding's where it exists (one fix, issue #57).
        ("finding:held-host=0", Some(p), None, None),
        ("finding:staged-pageable<1", Some(p), Some(s), None),
        // The pinned run's one finding (device memory, never minor) against the same report
        // with none (the staged run's count moves: whether its staged transfers lie on the
        // replayed critical path depends on PoCL's measured kernel times).
        ("findings>=1", Some(p), Some(n), None),
        ("staged_bytes<=1%", Some(p), Some(s), None),
        ("staged_bytes=0", Some(p), Some(s), None),
        ("pinned_bytes>=1MiB", Some(p), Some(s), None),
        ("h2d.pinned.median_gbps>=40", Some(p), Some(s), None),
        ("*.staged.calls=0", Some(p), Some(s), None),
        ("h2d.*.bytes<=8MiB", Some(s), Some(p), None),
        ("d2h.pinned.time>100us", Some(p), Some(s), None),
        ("transfer_time<=500us", Some(s), Some(p), None),
        ("transfer_time>=200us", Some(s), None, None),
        (&share_holds, Some(s), None, None),
        (&share_breaks, None, Some(s), None),
        ("wall_time<60s", Some(s), None, None),
        ("wall_time<1us", None, Some(s), None),
        ("transfer_time<=+5%", Some(s), Some(p), Some(s)),
        ("staged_bytes<=+0", Some(p), Some(s), Some(p)),
        ("h2d.pinned.median_gbps>=-10%", Some(p), Some(s), Some(p)),
    ];
    for &(rule, holds, breaks, baseline) in cases {
        let mut args = vec!["check", "--require", rule];
        if let Some(b) = baseline {
            args.extend(["--baseline", b]);
        }
        if let Some(run) = holds {
            let ok = clxfer(&[args.clone(), vec![run]].concat(), &[]);
            assert_eq!(
                ok.code,
                Some(0),
                "{rule} on {run}: {}{}",
                ok.stdout,
                ok.stderr
            );
            assert!(ok.stdout.contains("1 rule held"), "{rule}: {}", ok.stdout);
        }
        if let Some(run) = breaks {
            let bad = clxfer(&[args, vec![run]].concat(), &[]);
            assert_eq!(
                bad.code,
                Some(1),
                "{rule} on {run}: {}{}",
                bad.stdout,
                bad.stderr
            );
            let broken: Vec<&str> = bad
                .stdout
                .lines()
                .filter(|l| l.contains("broken:"))
                .collect();
            assert_eq!(broken.len(), 1, "{rule}: {}", bad.stdout);
            assert!(broken[0].contains(rule), "{rule}: {}", broken[0]);
        }
    }
    // One line per broken rule.
    let all = clxfer(
        &[
            "check",
            "--require",
            "no race,staged_bytes<=1%",
            "--require",
            "finding:staged-pageable=0",
            s,
        ],
        &[],
    );
    assert_eq!(all.code, Some(1));
    assert_eq!(
        all.stdout.lines().filter(|l| l.contains("broken:")).count(),
        2,
        "{}",
        all.stdout
    );
    // A trace gets Perfetto's rules and the user's.
    let traces = fresh_dir("guard-trace");
    let mut cmd = common::command(common::program("pipeline"), Load::Layer);
    cmd.args(["staged"])
        .env("CLXFER_RULES", "nvidia")
        .env("CLXFER_DIR", &traces);
    assert_eq!(run_cmd(cmd, Duration::from_secs(180)).code, Some(0));
    let t = clxfer(
        &[
            "check",
            "--require",
            "staged_bytes=0",
            traces.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(t.code, Some(1), "{}", t.stdout);
    assert!(
        t.stdout.contains(": ok: ") && t.stdout.contains("broken: staged_bytes=0"),
        "{}",
        t.stdout
    );
    // Malformed rules, and a change without its baseline: exit 2, naming the rule.
    for (rule, says) in [
        ("staged_bytes", "no comparison"),
        ("finding:nope=0", "no finding is called nope"),
        ("h2d.pinned.speed>1", "no field"),
        ("transfer_time<=+5%", "--baseline"),
    ] {
        let r = clxfer(&["check", "--require", rule, s], &[]);
        assert_eq!(r.code, Some(2), "{rule}: {}", r.stderr);
        let first = r.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("clxfer: ") && first.contains(rule) && first.contains(says),
            "{rule}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{rule}: {}", r.stdout);
    }
}

/// Runs `clxfer ARGS` on a pseudo-terminal (util-linux `script`), returning what it wrote.
fn on_a_terminal(args: &[&str]) -> String {
    let bin = env!("CARGO_BIN_EXE_clxfer");
    let line = std::iter::once(bin.to_string())
        .chain(args.iter().map(|a| format!("'{a}'")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &format!("{line} > /dev/null"), "/dev/null"]);
    cmd.env("CLXFER_TEST_PROGRESS_AFTER_MS", "0");
    let r = run_cmd(cmd, Duration::from_secs(60));
    r.stdout
}

#[test]
fn long_work_shows_progress_on_a_terminal_and_nothing_in_a_pipe() {
    let dir = fresh_dir("progress");
    let mut cmd = common::command(common::program("pipeline"), Load::Layer);
    cmd.args(["staged"]).env("CLXFER_DIR", &dir);
    assert_eq!(run_cmd(cmd, Duration::from_secs(180)).code, Some(0));
    let trace = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let t = trace.to_str().unwrap();
    let out = dir.join("out");
    let (pb, merged) = (out.join("t.pftrace"), out.join("m.json"));
    std::fs::create_dir_all(&out).unwrap();
    let commands: Vec<(&str, Vec<&str>)> = vec![
        ("reading", vec!["report", t]),
        ("checking", vec!["check", t]),
        ("reading", vec!["diff", t, t]),
        ("converting", vec!["convert", t, pb.to_str().unwrap()]),
        ("merging", vec!["merge", t, "-o", merged.to_str().unwrap()]),
    ];
    for (label, args) in &commands {
        let seen = on_a_terminal(args);
        assert!(
            seen.contains(&format!("clxfer: {label}")) && seen.contains("KiB"),
            "{args:?}: {seen:?}"
        );
        // Piped, nothing but what the command always says.
        let _ = std::fs::remove_file(&pb);
        let _ = std::fs::remove_file(&merged);
        let piped = clxfer(args, &[("CLXFER_TEST_PROGRESS_AFTER_MS", "0")]);
        assert!(
            !piped.stderr.contains(label) && !piped.stderr.contains('\r'),
            "{args:?}: {:?}",
            piped.stderr
        );
        let _ = std::fs::remove_file(&pb);
        let _ = std::fs::remove_file(&merged);
    }
    // The viewer reads the trace, then serves it (stopped by `timeout`).
    let mut cmd = std::process::Command::new("script");
    let line = format!("timeout 3 {} view '{t}'", env!("CARGO_BIN_EXE_clxfer"));
    cmd.args(["-qec", &line, "/dev/null"])
        .env("CLXFER_TEST_PROGRESS_AFTER_MS", "0");
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert!(
        r.stdout.contains("clxfer: reading") && r.stdout.contains("http://127.0.0.1:"),
        "{:?}",
        r.stdout
    );
}

/// The `run:` blocks of README's CI recipe, each as its lines, without the ones that install,
/// check out or post (a test machine has no GitHub).
fn recipe_steps() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let begin = readme
        .find("<!-- ci-recipe:begin -->")
        .expect("README has the CI recipe");
    let end = readme.find("<!-- ci-recipe:end -->").unwrap();
    let lines: Vec<&str> = readme[begin..end].lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let aside = |l: &str| {
        ["sudo ", "git ", "echo ", "gh ", "cargo "]
            .iter()
            .any(|p| l.starts_with(p))
    };
    let mut steps = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if let Some(rest) = l.strip_prefix("run:") {
            let mut step = Vec::new();
            if rest.trim() == "|" {
                let at = indent(lines[i]);
                while i + 1 < lines.len()
                    && indent(lines[i + 1]) > at
                    && !lines[i + 1].trim().is_empty()
                {
                    i += 1;
                    step.push(lines[i].trim().to_string());
                }
            } else {
                step.push(rest.trim().to_string());
            }
            step.retain(|l| !aside(l));
            if !step.is_empty() {
                steps.push(step);
            }
        }
        i += 1;
    }
    steps
}

#[test]
fn the_readme_ci_recipe_runs_and_its_guard_fails_a_regression() {
    let steps = recipe_steps();
    let all: Vec<&String> = steps.iter().flatten().collect();
    for needed in [
        "clxfer run --summary --rules nvidia",
        "clxfer diff --format md",
        "clxfer check --baseline",
    ] {
        assert!(
            all.iter().any(|l| l.contains(needed)),
            "the recipe lacks {needed:?}: {all:?}"
        );
    }
    let pipeline = common::program("pipeline");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_clxfer"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Main's program is fixed; the pull request regresses it to staged copies, or keeps it.
    for (pr, guard) in [("staged", 1), ("pinned", 0)] {
        let scratch = fresh_dir("ci-recipe");
        let (main, here) = (scratch.join("main"), scratch.join("pr"));
        for (dir, variant) in [(&main, "pinned"), (&here, pr)] {
            std::fs::create_dir_all(dir).unwrap();
            let script = dir.join("run-tests");
            std::fs::write(
                &script,
                format!("#!/bin/sh\nexec {} {variant}\n", pipeline.display()),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        for (n, step) in steps.iter().enumerate() {
            let mut cmd = std::process::Command::new("bash");
            cmd.args(["-eo", "pipefail", "-c", &step.join("\n")]);
            cmd.current_dir(&here);
            for (key, _) in std::env::vars() {
                if key.starts_with("CLXFER_")
                    || key.starts_with("OCL_ICD")
                    || key == "OPENCL_LAYERS"
                {
                    cmd.env_remove(key);
                }
            }
            cmd.env("PATH", &path);
            let r = run_cmd(cmd, Duration::from_secs(180));
            let last = n + 1 == steps.len();
            let want = if last { guard } else { 0 };
            assert_eq!(
                r.code,
                Some(want),
                "{pr}: step {step:?}: {}{}",
                r.stdout,
                r.stderr
            );
            if last && guard == 1 {
                let broken: Vec<&str> =
                    r.stdout.lines().filter(|l| l.contains("broken:")).collect();
                assert_eq!(broken.len(), 1, "{}", r.stdout);
                assert!(broken[0].contains("staged_bytes<=+0"), "{}", r.stdout);
            }
        }
        let md = std::fs::read_to_string(here.join("clxfer-diff.md")).unwrap();
        assert!(md.starts_with("### clxfer diff · pipeline"), "{md}");
        match pr {
            "staged" => assert!(
                md.contains("moved on device #1: D2H 8.00 MiB pinned → staged"),
                "{md}"
            ),
            _ => assert!(
                md.contains("nothing got worse") && !md.contains("moved on"),
                "{md}"
            ),
        }
    }
}
