//! The report (summary mode and `clxfer report`), `clxfer run` and `clxfer merge`, on real
//! programs under the real loader and PoCL.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn clxfer() -> std::process::Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG");
    cmd.env_remove("CLXFER_DIR");
    cmd
}

fn clxfer_run(args: &[&str]) -> Run {
    let mut cmd = clxfer();
    cmd.args(args);
    run_cmd(cmd, Duration::from_secs(180))
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A trace's events, read back whole (compact events expanded), as one array.
fn whole(path: &Path) -> Value {
    Value::Array(clxfer::trace::read::read_file(path).unwrap().events)
}

fn kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Runs `program` in trace mode with the live report written beside the trace; returns the live
/// report and `clxfer report`'s report of the trace, both as JSON.
fn live_and_from_trace(program: &Path, args: &[&str], rules: &str) -> (Value, Value, PathBuf) {
    let out = fresh_dir("report-traces");
    let reports = fresh_dir("report-live");
    let live = reports.join("live.json");
    let mut cmd = command(program, Load::Layer);
    cmd.args(args)
        .env("POCL_DEVICES", "pthread pthread")
        .env("CLXFER_DIR", &out)
        .env("CLXFER_RULES", rules)
        .env("CLXFER_REPORT", &live);
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.traces.len(), 1, "{}", r.stderr);
    let trace = r.traces[0].clone();
    let mut cmd = clxfer();
    cmd.args(["report", "--format", "json"]).arg(&trace);
    let rep = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(rep.code, Some(0), "{}", rep.stderr);
    let from_trace: Value = serde_json::from_str(&rep.stdout).unwrap();
    (json(&live), from_trace, trace)
}

#[test]
fn the_live_report_and_the_report_of_the_trace_agree() {
    for (program, args, rules) in [
        (program("transfers"), vec![], "nvidia"),
        (program("transfers"), vec![], "auto"),
        (program("demo"), vec!["2", "1"], "amd"),
    ] {
        let (live, from_trace, trace) = live_and_from_trace(&program, &args, rules);
        assert_eq!(
            live,
            from_trace,
            "{rules}: the reports of {} differ",
            trace.display()
        );
        // And they hold something: both devices, rows, findings.
        assert!(!live["devices"].as_array().unwrap().is_empty());
        assert!(
            !live["devices"][0]["transfers"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        assert!(live["wall_ns"].as_u64().unwrap() > 0);
    }
}

#[test]
fn findings_name_each_pattern_rank_by_saving_and_stay_within_100_columns() {
    let (nvidia, _, _) = live_and_from_trace(&program("demo"), &["2", "1"], "nvidia");
    let k = kinds(&nvidia);
    for want in [
        "staged-pageable",
        "map-write-copied",
        "alloc-host-ptr-device-memory",
        "small-transfers",
    ] {
        assert!(k.contains(&want.to_string()), "{want} missing from {k:?}");
    }
    let savings: Vec<u64> = nvidia["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["saving_ns"].as_u64().unwrap())
        .collect();
    assert!(savings.windows(2).all(|w| w[0] >= w[1]), "{savings:?}");
    // The map-WRITE copy under forced rules: PoCL copied nothing, so the saving is the copy of
    // the demo's 2 MiB at NVIDIA's pinned figure (55.4 GB/s: 37.9 µs), within 2× (issue #26).
    let map = nvidia["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "map-write-copied")
        .unwrap();
    let cost = clxfer::model::rules::NVIDIA.cost.unwrap();
    let model = (2u64 << 20) as f64 / cost.pinned[1].unwrap().peak();
    let saved = map["saving_ns"].as_u64().unwrap() as f64;
    assert!(
        saved >= model / 2.0 && saved <= model * 2.0,
        "{saved} ns against {model}: {map}"
    );
    // Replayed on the graph with projected durations: the map is blocking, so the run ends
    // as much sooner as the copy took.
    let estimate = map["estimate"].as_str().unwrap();
    assert!(
        estimate.starts_with("replayed: the run's command graph, its durations projected,")
            && estimate.contains("projected: the copies' device time"),
        "{map}"
    );
    // The rules were forced on a CPU device: estimates use NVIDIA's cost model, said so.
    let staged = nvidia["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "staged-pageable")
        .unwrap();
    // One fix, one finding (issue #57): the non-blocking calls that held the host are in it.
    assert!(
        staged["title"].as_str().unwrap().contains("held the host"),
        "{staged}"
    );
    assert!(!k.contains(&"nonblocking-held-host".to_string()), "{k:?}");
    assert!(
        staged["estimate"]
            .as_str()
            .unwrap()
            .contains("pinned links")
            && staged["estimate"]
                .as_str()
                .unwrap()
                .contains("nvidia cost model"),
        "{staged}"
    );
    assert!(
        staged["fix"]
            .as_str()
            .unwrap()
            .contains("CL_MEM_ALLOC_HOST_PTR")
    );

    // AMD: migrate with flags 0 is only a marker; the two devices' migrations go via the host.
    let (amd, _, _) = live_and_from_trace(&program("demo"), &["2", "1"], "amd");
    assert!(
        kinds(&amd).contains(&"empty-migration".to_string()),
        "{:?}",
        kinds(&amd)
    );
    let (two, _, _) = live_and_from_trace(&program("transfers"), &[], "nvidia");
    assert!(
        kinds(&two).contains(&"via-host-migration".to_string()),
        "{:?}",
        kinds(&two)
    );
    // PoCL's own rules: no bus, so nothing is staged; the small transfers remain.
    let (cpu, _, _) = live_and_from_trace(&program("demo"), &["2", "1"], "auto");
    let k = kinds(&cpu);
    assert!(k.contains(&"small-transfers".into()), "{cpu}");
    assert!(
        k.iter()
            .all(|k| k == "small-transfers" || k == "device-time-unavailable"),
        "{cpu}"
    );

    // The text form of a larger run: aligned, human-sized, no line over 100 characters, and the
    // findings under 1% counted in one line.
    let mut cmd = clxfer();
    cmd.env("POCL_DEVICES", "pthread pthread").args([
        "run",
        "--summary",
        "--rules",
        "nvidia",
        "--out",
    ]);
    cmd.arg(fresh_dir("summary-out"))
        .arg("--")
        .arg(program("demo"))
        .args(["16", "4"]);
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = r.stderr;
    for needle in [
        "clxfer summary · demo (pid ",
        "device #1 · pthread-",
        "dir  path",
        "median GB/s  p90 GB/s",
        "H2D  staged",
        "MiB",
        "best pinned",
        "device memory: buffers and SVM/USM allocations peaked at",
        "findings, ranked by the time they would save:",
        " 1. ",
        "    fix:      ",
        // Weighed against the projected device time (forced rules), whatever this machine's
        // wall: the small writes are shown, the smallest finding counted.
        "save under 1% of the projected device time",
        "transfers under 64.0 KiB are latency-bound",
        "clxfer: report: above, on stderr",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in\n{text}");
    }
    // A saving shown, or (a loaded machine stretches the run's wall time) counted as minor
    // with its largest figure.
    assert!(
        text.contains("    saves:    ~")
            || text.contains("(the largest ")
            || text.contains("(it saves no time, by replay)"),
        "no saving in\n{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "too long: {line:?}");
    }
}

/// Every number followed by ` GB/s` in `text`.
fn bandwidths(text: &str) -> Vec<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    (words.windows(2))
        .filter(|w| w[1].starts_with("GB/s"))
        .filter_map(|w| w[0].trim_start_matches(['(', '~']).parse().ok())
        .collect()
}

#[test]
fn under_forced_rules_no_figure_is_faster_than_the_target_s_link() {
    // Issue #26: PoCL moves nothing for most commands, so its times under NVIDIA's rules gave
    // bandwidths no device reached (56,885 GB/s "pinned"). Now the cost model projects them:
    // no table, finding, trace arg or text line is faster than NVIDIA's link.
    let cost = clxfer::model::rules::NVIDIA.cost.unwrap();
    let link = cost.link_gbps();
    let bus = |r: &Value| r["direction"] == "H2D" || r["direction"] == "D2H";
    for (name, args) in [("demo", vec!["8", "2"]), ("transfers", vec![])] {
        let (report, _, trace) = live_and_from_trace(&program(name), &args, "nvidia");
        for d in report["devices"].as_array().unwrap() {
            assert_eq!(d["projection"]["replaces"], true, "{name}: {d}");
            let rows = d["transfers"].as_array().unwrap().iter();
            for r in rows
                .chain(d["operations"].as_array().unwrap())
                .filter(|r| bus(r))
            {
                for key in ["median_gbps", "p90_gbps"] {
                    let g = r[key].as_f64().unwrap_or(0.0);
                    assert!(g <= link, "{name}: {key} {g} > {link}: {r}");
                }
                // Projected where the model has a figure (a path that moves nothing has none).
                if r["path"] == "pinned" || r["path"] == "staged" {
                    assert!(r["projected_ns"].as_u64().unwrap() > 0, "{r}");
                }
            }
            for (_, g) in d["best_pinned_gbps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].clone(), p[1].as_f64().unwrap()))
            {
                assert!(g <= link, "{name}: best pinned {g}");
            }
        }
        for f in report["findings"].as_array().unwrap() {
            let mut text = f["saves"].as_str().unwrap().to_string();
            for e in f["evidence"].as_array().unwrap() {
                text += " ";
                text += e.as_str().unwrap();
            }
            for g in bandwidths(&text) {
                assert!(g <= link, "{name}: {g} GB/s in {f}");
            }
        }
        // The trace: the projection beside each classified call, no GB/s from PoCL's times.
        let events: Vec<Value> = clxfer::trace::read::read_file(&trace).unwrap().events;
        let mut projected = 0;
        for e in &events {
            let a = &e["args"];
            assert!(
                a.get("host_gbps").is_none() && a.get("device_gbps").is_none(),
                "{e}"
            );
            if let Some(g) = a["projected_gbps"].as_f64().filter(|_| bus(a)) {
                assert!(g <= link, "{e}");
                assert!(a["projected_us"].as_f64().unwrap() > 0.0, "{e}");
                projected += 1;
            }
        }
        assert!(
            projected > 0,
            "{name}: no projected call in {}",
            trace.display()
        );
        // The migrations between the two devices: through the host by NVIDIA's two legs, the
        // saving within 2× of the cost model's (PoCL moved nothing: ~700 ns before #26).
        if name == "transfers" {
            let f = (report["findings"].as_array().unwrap().iter())
                .find(|f| f["kind"] == "via-host-migration")
                .unwrap();
            let model: f64 = (report["devices"].as_array().unwrap().iter())
                .flat_map(|d| d["operations"].as_array().unwrap())
                .filter(|r| r["kind"] == "Migrate" && r["path"] == "via-host")
                .map(|r| {
                    let calls = r["calls"].as_u64().unwrap().max(1);
                    let each = cost
                        .via_host_ns(r["bytes"].as_u64().unwrap() / calls)
                        .unwrap();
                    (calls * each) as f64
                })
                .sum();
            let saved = f["saving_ns"].as_f64().unwrap();
            assert!(
                saved >= model / 2.0 && saved <= model * 2.0,
                "{saved} against {model}: {f}"
            );
        }
        // The held host, inside the staged finding: the calls' projected time less the rules'
        // floor.
        if let Some(f) = (report["findings"].as_array().unwrap().iter())
            .find(|f| f["title"].as_str().unwrap().contains("held the host"))
        {
            assert!(
                f["evidence"]
                    .to_string()
                    .contains("is the enqueue's own cost"),
                "{f}"
            );
        }
    }
}

#[test]
fn forced_rules_without_a_cost_model_show_no_bandwidth_and_estimate_no_time() {
    // AMD's rules have no measured cost model: under them PoCL's times would be the only figures,
    // and they say nothing of an AMD GPU. No row has a bandwidth, no time finding a saving.
    let (report, from_trace, trace) = live_and_from_trace(&program("demo"), &["2", "1"], "amd");
    assert_eq!(report, from_trace);
    let d = &report["devices"][0];
    assert_eq!(d["projection"]["replaces"], true, "{d}");
    let rows = d["transfers"].as_array().unwrap().iter();
    for r in rows.chain(d["operations"].as_array().unwrap()) {
        assert!(r["median_gbps"].is_null() && r["p90_gbps"].is_null(), "{r}");
    }
    assert!(d["best_pinned_gbps"].as_array().unwrap().is_empty(), "{d}");
    for f in report["findings"].as_array().unwrap() {
        if ["staged-pageable", "map-write-copied", "small-transfers"]
            .contains(&f["kind"].as_str().unwrap())
        {
            assert_eq!(f["saving_ns"], 0, "{f}");
            assert!(
                f["estimate"].as_str().unwrap().starts_with("not estimated"),
                "{f}"
            );
        }
    }
    let events: Vec<Value> = clxfer::trace::read::read_file(&trace).unwrap().events;
    for e in &events {
        let a = &e["args"];
        for key in ["host_gbps", "device_gbps", "projected_gbps"] {
            assert!(a.get(key).is_none(), "{key}: {e}");
        }
    }
}

#[test]
fn a_fix_saves_what_the_replayed_graph_says_overlapped_transfers_save_nothing() {
    // Issue #26, savings by replay: 32 MiB staged writes beside long kernels on another queue
    // (`overlap`) or behind them on one in-order queue (`serial`), under NVIDIA's rules. Pinned
    // memory makes each write faster in both; only in the serial program does the run end
    // sooner, by what the writes save (the replay runs the graph with projected durations).
    let saving = |variant: &str| {
        // The trace's report: once in about twenty runs the live one came out with this saving 0
        // while the trace's was whole (not reproduced since; noted in issue #26).
        let (_, from_trace, _) = live_and_from_trace(&program("overlap"), &[variant], "nvidia");
        let f = (from_trace["findings"].as_array().unwrap().iter())
            .find(|f| f["kind"] == "staged-pageable")
            .cloned()
            .unwrap_or_else(|| panic!("{variant}: no staged finding"));
        assert!(
            f["estimate"].as_str().unwrap().starts_with("replayed: "),
            "{f}"
        );
        f["saving_ns"].as_u64().unwrap()
    };
    let (serial, overlap) = (saving("serial"), saving("overlap"));
    // Four 32 MiB writes, each from ~5 ms (projected staged) to ~0.6 ms (pinned).
    assert!(serial > 10_000_000, "serial: {serial}");
    assert!(
        overlap < serial / 10,
        "overlap {overlap} against serial {serial}"
    );
}

#[test]
fn the_cost_model_projects_the_h200_example_within_25_percent() {
    // The model's figures come from a size sweep on an H200 (docs/ground-truth.md); the example
    // is another program traced on another visit: for transfers of 1 MiB or more, the projected
    // device time is within 25% of the measured one in every row (issue #26).
    let projected = |trace: &Path| -> Value {
        let r = clxfer_run(&[
            "report",
            "--project",
            "nvidia",
            "--format",
            "json",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        serde_json::from_str(&r.stdout).unwrap()
    };
    let report = projected(&root().join("docs/examples/h200-trace.json"));
    let mut rows = 0;
    for d in report["devices"].as_array().unwrap() {
        assert_eq!(d["projection"]["replaces"], false, "{d}");
        for row in d["transfers"].as_array().unwrap() {
            let Some(c) = row.get("compared").filter(|c| !c.is_null()) else {
                continue;
            };
            let ratio = c["projected_ns"].as_f64().unwrap() / c["measured_ns"].as_f64().unwrap();
            assert!((0.75..=1.25).contains(&ratio), "{ratio:.2}: {row}");
            rows += 1;
        }
        // Beside, not instead: the measured bandwidths stay (53-55 GB/s pinned there).
        assert!(
            d["best_pinned_gbps"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p[1].as_f64().unwrap() > 40.0)
        );
    }
    assert!(rows >= 5, "{rows} rows compared");
    // The demo's trace under forced rules is projected already: --project changes nothing.
    let (_, plain, trace) = live_and_from_trace(&program("demo"), &["2", "1"], "nvidia");
    let again = projected(&trace);
    assert_eq!(again, plain);
    assert_eq!(again["devices"][0]["projection"]["replaces"], true);
    // A device the rules do not describe is not projected, and the user is told why.
    let (_, _, trace) = live_and_from_trace(&program("demo"), &["2", "1"], "auto");
    let r = clxfer_run(&["report", "--project", "nvidia", trace.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("--project nvidia: device #1")
            && r.stderr.contains("clxfer run --rules nvidia"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("projected"), "{}", r.stdout);
}

#[test]
fn svm_allocations_count_where_the_rules_put_them_and_copies_between_them_agree() {
    // Issue #26: an SVM-to-SVM copy was `D2D device` while its allocations counted only as
    // pinned host memory and took no device memory. Now NVIDIA's rules give a coarse-grain
    // allocation device storage (and a pinned host mirror): the device's memory peaks at the
    // two 8 MiB allocations alive at once, the copy between them stays on the device, and a
    // copy into fine-grain SVM (host memory) leaves it. PoCL's own rules: one memory, nothing.
    for (rules, peak) in [("nvidia", 16u64 << 20), ("auto", 0)] {
        let (report, _, trace) = live_and_from_trace(&program("svm_memory"), &[], rules);
        let d = &report["devices"][0];
        assert_eq!(
            d["resident_peak_bytes"].as_u64(),
            Some(peak),
            "{rules}: {d}"
        );
        assert!(
            report["pinned_host_peak_bytes"].as_u64().unwrap() >= 16 << 20,
            "{rules}"
        );
        let events: Vec<Value> = clxfer::trace::read::read_file(&trace).unwrap().events;
        let copies: Vec<(String, String, bool)> = (events.iter())
            .filter(|e| e["ph"] == "X" && e["args"]["api"] == "clEnqueueSVMMemcpy")
            .map(|e| {
                let a = &e["args"];
                let cites = a["rule_ids"]
                    .to_string()
                    .contains(&format!("{}.svm", a["rules"].as_str().unwrap()));
                (
                    a["direction"].as_str().unwrap().into(),
                    a["path"].as_str().unwrap().into(),
                    cites,
                )
            })
            .collect();
        let want: Vec<(&str, &str)> = match rules {
            "nvidia" => vec![("D2D", "device"), ("D2D", "device"), ("D2H", "pinned")],
            _ => vec![
                ("D2D", "host-copy"),
                ("D2D", "host-copy"),
                ("D2D", "host-copy"),
            ],
        };
        let got: Vec<(&str, &str)> = copies
            .iter()
            .map(|c| (c.0.as_str(), c.1.as_str()))
            .collect();
        assert_eq!(got, want, "{rules}: {}", trace.display());
        assert!(
            copies.iter().all(|c| c.2),
            "{rules}: the SVM rule is cited: {copies:?}"
        );
    }
}

#[test]
fn summary_mode_writes_no_trace_and_changes_nothing() {
    let plain = run(program("demo"), Load::None, &[("CLXFER_MODE", "off")]);
    let out = fresh_dir("summary-none");
    let mut cmd = clxfer();
    cmd.args(["run", "--summary", "--out"]).arg(&out).arg("--");
    cmd.arg(program("demo")).args(["16", "4"]);
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let checksum = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("checksum"))
            .map(str::to_string)
    };
    assert_eq!(checksum(&r.stdout), checksum(&plain.stdout));
    assert!(checksum(&r.stdout).is_some());
    assert!(r.stderr.contains("clxfer summary"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "a file was written"
    );
    // With --no-device-timing every transfer lacks a device time, and the report says so.
    let reports = fresh_dir("summary-report");
    let path = reports.join("r.json");
    let r = clxfer_run(&[
        "run",
        "--summary",
        "--no-device-timing",
        "--report",
        path.to_str().unwrap(),
        "--",
        program("demo").to_str().unwrap(),
        "2",
        "1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("clxfer: report: {}", path.display())),
        "{}",
        r.stderr
    );
    let rep = json(&path);
    assert!(
        kinds(&rep).contains(&"device-time-unavailable".into()),
        "{rep}"
    );
    // Every transfer that moves bytes; one that moves nothing needs no time.
    assert_eq!(
        rep["devices"][0]["without_device_time"],
        rep["devices"][0]["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["path"] != "none")
            .map(|r| r["calls"].as_u64().unwrap())
            .sum::<u64>()
    );
    // The report file is never clobbered: a second run gets the next name.
    let r = clxfer_run(&[
        "run",
        "--summary",
        "--report",
        path.to_str().unwrap(),
        "--",
        program("demo").to_str().unwrap(),
        "2",
        "1",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(reports.join("r.1.json").exists(), "{}", r.stderr);
    assert_eq!(json(&path), rep);
}

#[test]
fn summary_memory_stays_constant_however_long_the_run() {
    let rss = |enqueues: &str| {
        let mut cmd = command(program("storm"), Load::Layer);
        cmd.arg(enqueues).arg("1").env("CLXFER_MODE", "summary");
        let r = run_cmd(cmd, Duration::from_secs(300));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(r.stderr.contains("clxfer summary"), "{}", r.stderr);
        r.stdout
            .lines()
            .find_map(|l| l.strip_prefix("max_rss_kib "))
            .unwrap()
            .parse::<i64>()
            .unwrap()
    };
    let short = rss("20000");
    let long = rss("400000");
    assert!(
        long - short < 8 * 1024,
        "peak RSS grew by {} KiB from 20,000 to 400,000 enqueues",
        long - short
    );
}

/// `clxfer run --out OUT -- sh -c "transfers; transfers<tail>"`: two child processes.
fn transfers_twice(out: &Path, tail: &str) -> Run {
    let script = format!(
        "{0} >/dev/null 2>&1; {0} >/dev/null 2>&1{tail}",
        program("transfers").display()
    );
    let mut cmd = clxfer();
    cmd.args(["run", "--out"])
        .arg(out)
        .args(["--", "sh", "-c", &script]);
    run_cmd(cmd, Duration::from_secs(180))
}

#[test]
fn run_passes_the_exit_code_traces_children_and_reports_bad_input_in_one_line() {
    // The exit code of the program, and every child process traced in its own file.
    let out = fresh_dir("run-children");
    let r = transfers_twice(&out, "; exit 3");
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    let traces = checked_traces(&out);
    assert_eq!(traces.len(), 2, "{}", r.stderr);
    for t in &traces {
        assert!(
            r.stderr
                .contains(&format!("clxfer: trace: {}", t.display())),
            "{}",
            r.stderr
        );
    }
    // Preload works too.
    let out = fresh_dir("run-preload");
    let mut cmd = clxfer();
    cmd.args(["run", "--preload", "--out"])
        .arg(&out)
        .arg("--")
        .arg(program("transfers"));
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(checked_traces(&out).len(), 1);

    let bad = fresh_dir("bad-input");
    std::fs::write(bad.join("bad.json"), "{\"traceEvents\": [1, 2").unwrap();
    let bad_json = bad.join("bad.json");
    // What cannot be read or run: one line. A usage error: clap's whole message (what is wrong,
    // the accepted values, the usage line), every line under the prefix (issue #23).
    for (args, needle, one_line) in [
        (
            vec!["run", "--", "/nonexistent/program"],
            "cannot run /nonexistent/program",
            true,
        ),
        (vec!["report", bad_json.to_str().unwrap()], "bad.json", true),
        (
            vec!["report", "/nonexistent.json"],
            "/nonexistent.json",
            true,
        ),
        (
            vec!["merge", "/nonexistent.json", "-o", "/tmp/x.json"],
            "/nonexistent.json",
            true,
        ),
        (
            vec!["run", "--frobnicate", "--", "true"],
            "--frobnicate",
            false,
        ),
        (vec!["run", "--rules", "acme", "--", "true"], "acme", false),
        (vec!["report"], "required", false),
    ] {
        let r = clxfer_run(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        let lines: Vec<&str> = r.stderr.lines().collect();
        if one_line {
            assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        } else {
            assert!(lines.len() > 1, "{args:?}: the whole message: {}", r.stderr);
        }
        assert!(
            lines.iter().all(|l| l.starts_with("clxfer: ")) && lines[0].contains(needle),
            "{args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"));
    }
    // The parts of clap's messages that were cut before.
    for (args, expected) in [
        (vec!["run"], "clxfer:   <PROGRAM ARGS>..."),
        (
            vec!["run"],
            "clxfer: Usage: clxfer run -- <PROGRAM ARGS>...",
        ),
        (vec!["merge", "a.json"], "clxfer:   --output <FILE>"),
        (
            vec!["report", "--format", "xml", "a.json"],
            "clxfer:   [possible values: text, json, md, csv]",
        ),
        (
            vec!["run", "/bin/true"],
            "clxfer: tip: put -- before the program and its arguments",
        ),
    ] {
        let r = clxfer_run(&args);
        assert_eq!(r.code, Some(2), "{args:?}");
        assert!(
            r.stderr.lines().any(|l| l.starts_with(expected)),
            "{args:?}: no {expected:?} in\n{}",
            r.stderr
        );
    }
    // Bare `clxfer`: the help, as a usage error.
    let r = clxfer_run(&[]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stdout.contains("Usage: clxfer <COMMAND>") && r.stdout.contains("Example"),
        "{}",
        r.stdout
    );
    for sub in ["run", "report", "check", "merge", "doctor"] {
        let r = clxfer_run(&[sub, "--help"]);
        assert_eq!(r.code, Some(0), "{sub}");
        assert!(
            r.stdout.contains("Example"),
            "{sub} --help has no example:\n{}",
            r.stdout
        );
    }
}

/// The `start_time` of a trace's start event, as written.
fn first_start_time(text: &str) -> String {
    let at = text.find("\"start_time\":\"").unwrap() + "\"start_time\":\"".len();
    text[at..at + text[at..].find('"').unwrap()].to_string()
}

#[test]
fn merge_aligns_processes_on_one_timeline() {
    // Two processes, one after the other: two traces with their own start times.
    let src = fresh_dir("merge-src");
    let r = transfers_twice(&src, "");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let traces = checked_traces(&src);
    assert_eq!(traces.len(), 2);
    let start = |p: &Path| {
        let t = json(p);
        let e = t
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "clxfer trace start")
            .unwrap()
            .clone();
        let wall = chrono::DateTime::parse_from_rfc3339(e["args"]["start_time"].as_str().unwrap())
            .unwrap();
        (wall, e["args"]["pid"].as_u64().unwrap())
    };
    let (w0, p0) = start(&traces[0]);
    let (w1, p1) = start(&traces[1]);
    let (first, second) = if w0 <= w1 {
        ((w0, p0), (w1, p1))
    } else {
        ((w1, p1), (w0, p0))
    };
    let dir = fresh_dir("merged");
    // A third trace with the first one's pid (another process, a second later, as after pid
    // reuse): its pid must be renumbered and its flow ids kept apart.
    let same_pid = src.join("same-pid.json");
    let text = std::fs::read_to_string(&traces[0]).unwrap();
    let started = first_start_time(&text);
    let later = (chrono::DateTime::parse_from_rfc3339(&started).unwrap()
        + chrono::Duration::seconds(1))
    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    std::fs::write(&same_pid, text.replace(&started, &later)).unwrap();
    let out = dir.join("all.json");
    let mut cmd = clxfer();
    cmd.arg("merge")
        .args(&traces)
        .arg(&same_pid)
        .arg("-o")
        .arg(&out);
    let m = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    assert_eq!(checked_traces(&dir), std::slice::from_ref(&out));
    let events = whole(&out);
    let events = events.as_array().unwrap();
    let count = |p: &Path| json(p).as_array().unwrap().len();
    assert_eq!(events.len(), count(&traces[0]) * 2 + count(&traces[1]));
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["name"] == "clxfer trace start")
        .collect();
    let pids: std::collections::HashSet<u64> =
        starts.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 3, "pids not kept distinct");
    // The later process starts later on the merged timeline, by the difference of the wall clocks.
    let ts_of = |pid: u64| {
        starts.iter().find(|e| e["args"]["pid"] == pid).unwrap()["ts"]
            .as_f64()
            .unwrap()
    };
    let gap_us = (second.0 - first.0).num_microseconds().unwrap() as f64;
    assert!(gap_us > 0.0);
    assert!((ts_of(second.1) - ts_of(first.1) - gap_us).abs() < 1.0);
    // Its report is each process's own (issue #23): not one program's name over all, not their
    // transfers summed into one device.
    let report_of = |p: &Path| {
        let r = clxfer_run(&["report", "--format", "json", p.to_str().unwrap()]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        serde_json::from_str::<Value>(&r.stdout).unwrap()
    };
    let merged = report_of(&out);
    let merged = merged.as_array().expect("one report per process");
    assert_eq!(merged.len(), 3);
    for (m, t) in merged.iter().zip([&traces[0], &traces[1], &same_pid]) {
        let alone = report_of(t);
        for key in [
            "program",
            "pid",
            "start_time",
            "devices",
            "findings",
            "wall_ns",
        ] {
            assert_eq!(m[key], alone[key], "{key} of {}", t.display());
        }
    }
    let text = clxfer_run(&["report", out.to_str().unwrap()]).stdout;
    assert_eq!(text.matches("clxfer summary · transfers (pid ").count(), 3);
    // Never overwrites.
    let mut cmd = clxfer();
    cmd.arg("merge").arg(&traces[0]).arg("-o").arg(&out);
    let again = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(again.code, Some(2));
    assert!(
        again.stderr.contains("never overwritten"),
        "{}",
        again.stderr
    );
    // One trace: "1 trace", not "1 traces" (issue #23).
    let one = dir.join("one.json");
    let mut cmd = clxfer();
    cmd.arg("merge").arg(&traces[0]).arg("-o").arg(&one);
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("clxfer: merged 1 trace ("),
        "{}",
        r.stderr
    );
    // The same trace twice, under its name and as a copy: refused, and no file left (issue #23).
    let copy = dir.join("copy.json");
    std::fs::copy(&traces[0], &copy).unwrap();
    for second in [&traces[0], &copy] {
        let twice = dir.join("twice.json");
        let mut cmd = clxfer();
        cmd.arg("merge")
            .arg(&traces[0])
            .arg(second)
            .arg("-o")
            .arg(&twice);
        let r = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        assert!(
            lines[0].contains("are the same trace")
                && lines[0].contains("give each process's trace once"),
            "{}",
            r.stderr
        );
        assert!(!twice.exists());
    }
}

/// Issue #23: `clxfer run` passes the user's CLXFER_* variables through, a flag overrides its
/// variable, and under CLXFER_LOG=info the layer says where each option came from.
#[test]
fn run_passes_the_users_clxfer_variables_through_and_flags_override_them() {
    let prog = program("transfers");
    let go = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = clxfer();
        cmd.args(args)
            .arg("--")
            .arg(&prog)
            .envs(env.iter().copied());
        run_cmd(cmd, Duration::from_secs(180))
    };
    let r = go(&["run", "--summary"], &[("CLXFER_RULES", "nvidia")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("· nvidia rules (forced"), "{}", r.stderr);
    let r = go(
        &["run", "--summary", "--rules", "amd"],
        &[("CLXFER_RULES", "nvidia"), ("CLXFER_LOG", "info")],
    );
    assert!(r.stderr.contains("· amd rules (forced"), "{}", r.stderr);
    let said = r
        .stderr
        .lines()
        .find(|l| l.starts_with("clxfer: options: "))
        .unwrap_or_else(|| panic!("no options line: {}", r.stderr));
    assert_eq!(
        said,
        "clxfer: options: CLXFER_MODE=summary (--summary), CLXFER_LOG=info (environment), \
         CLXFER_RULES=amd (--rules); the rest default"
    );
    // CLXFER_LOG=debug reaches the program, and so does --log debug.
    for (args, env) in [
        (vec!["run", "--summary"], vec![("CLXFER_LOG", "debug")]),
        (vec!["run", "--summary", "--log", "debug"], vec![]),
    ] {
        let r = go(&args, &env);
        assert!(
            r.stderr
                .contains("clxfer: clEnqueueWriteBuffer on device #1"),
            "{args:?} {env:?}: {}",
            r.stderr
        );
    }
    // CLXFER_DIR without --out is where the trace goes.
    let dir = fresh_dir("run-env-dir");
    let r = go(
        &["run", "--rules", "nvidia"],
        &[("CLXFER_DIR", dir.to_str().unwrap())],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let traces = checked_traces(&dir);
    assert_eq!(traces.len(), 1, "{}", r.stderr);
    // After a trace run: its path, size and event count, the verdict, how to open it.
    let events = json(&traces[0]).as_array().unwrap().len(); // the end event counts itself too
    let size = clxfer::units::bytes(std::fs::metadata(&traces[0]).unwrap().len());
    let said = format!(
        "clxfer: trace: {} ({size}, {events} events)",
        traces[0].display()
    );
    assert!(r.stderr.contains(&said), "{said:?} in\n{}", r.stderr);
    // The top finding is the trace's first: which one ranks first depends on measured time (a
    // slow read on a busy machine can outrank the 13 staged writes), so it is read, not assumed.
    let end = json(&traces[0])
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == clxfer::vocab::schema::TRACE_END)
        .cloned()
        .unwrap();
    let findings = end["args"]["report"]["findings"]
        .as_array()
        .unwrap()
        .clone();
    let title = |f: &Value| f["title"].as_str().unwrap().to_string();
    assert!(
        findings
            .iter()
            .any(|f| title(f).starts_with("15 transfers from pageable memory were staged")),
        "{findings:?}"
    );
    // The verdict's headline: the program's refused write first (a failed call), then the
    // first finding shown (misuse, else most saved).
    let headline = end["args"]["report"]["verdict"]["headline"]
        .as_str()
        .unwrap();
    let top = findings.iter().find(|f| f["minor"] != true).unwrap();
    let failed = "1 OpenCL call returned an error: clEnqueueWriteBuffer returned CL_INVALID_MEM_OBJECT (-38)";
    assert!(
        headline.starts_with(&format!("{failed}; and {}", title(top))),
        "{headline}"
    );
    let said = format!("clxfer:   verdict: {headline}");
    assert!(r.stderr.contains(&said), "{said:?} in\n{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "clxfer:   open it with: clxfer view {}",
            traces[0].display()
        )),
        "{}",
        r.stderr
    );
}

/// Issue #23: `--report -` and a character device or FIFO are written as they are, never a file
/// beside them; a FIFO nobody reads does not hold the program at exit (the report goes to stderr).
#[test]
fn a_report_to_stderr_or_a_device_is_written_there_as_it_is() {
    let prog = program("transfers");
    let dir = fresh_dir("report-streams");
    let fifo = dir.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for target in [
        std::path::PathBuf::from("-"),
        std::path::PathBuf::from("/dev/stderr"),
        fifo.clone(),
    ] {
        let mut cmd = clxfer();
        cmd.current_dir(&dir)
            .args(["run", "--summary", "--report"])
            .arg(&target)
            .arg("--")
            .arg(&prog);
        let r = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(r.code, Some(0), "{}: {}", target.display(), r.stderr);
        assert!(
            r.stderr.contains("clxfer summary · transfers"),
            "{}: {}",
            target.display(),
            r.stderr
        );
    }
    // Nothing was created for them: no `-`, no `/dev/stderr.1`, no `fifo.1`.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["fifo"]);
    assert!(!std::path::Path::new("/dev/stderr.1").exists());
}

/// Issue #23: `clxfer report` gives no report that looks complete for what is not a whole clxfer
/// trace, reads a directory's traces, and gives several traces' JSON as one document.
#[test]
fn report_refuses_what_is_not_a_clxfer_trace_and_warns_about_a_cut_one() {
    let dir = fresh_dir("report-inputs");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    for (path, needle) in [
        (
            write("empty.json", "{\"traceEvents\": []}"),
            "an empty trace",
        ),
        (
            write("partial.json", "[{\"ph\":\"X\",\"pid\":1,"),
            "an empty trace",
        ),
        (
            write(
                "other.json",
                "[{\"name\":\"main\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5}]",
            ),
            "not a clxfer trace",
        ),
    ] {
        let r = clxfer_run(&["report", path.to_str().unwrap()]);
        assert_eq!(r.code, Some(2), "{}: {}", path.display(), r.stderr);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        assert!(
            lines[0].contains(needle),
            "{}: {}",
            path.display(),
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{}", r.stdout);
        // As CSV too: the one line, and not even a header on stdout.
        let r = clxfer_run(&["report", "--format", "csv", path.to_str().unwrap()]);
        assert_eq!(r.code, Some(2), "{}: {}", path.display(), r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    // A directory with no trace says so.
    let none = fresh_dir("report-no-traces");
    let r = clxfer_run(&["report", none.to_str().unwrap()]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("is a directory with no clxfer-*.json or clxfer-*.pftrace trace"),
        "{}",
        r.stderr
    );
    // Two real traces in a directory: both reported; as JSON, one document.
    let src = fresh_dir("report-dir");
    let r = transfers_twice(&src, "");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = clxfer_run(&["report", src.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.matches("clxfer summary · transfers").count(), 2);
    let r = clxfer_run(&["report", "--format", "json", src.to_str().unwrap()]);
    let doc: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    assert_eq!(doc.as_array().map(Vec::len), Some(2));
    // A trace cut in half: its report, with one warning line first.
    let whole = checked_traces(&src).remove(0);
    let text = std::fs::read_to_string(&whole).unwrap();
    let cut = write("cut.json", &text[..text.len() / 2]);
    let r = clxfer_run(&["report", cut.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let warnings: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", r.stderr);
    assert!(
        warnings[0].starts_with("clxfer: warning: ") && warnings[0].contains("was cut short"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("clxfer summary · transfers"),
        "{}",
        r.stdout
    );
    // What only the end event says is "unknown", never 0 or a dash; the whole trace knows it.
    for needle in [
        "allocations peaked at unknown",
        "clock mapping unknown",
        "without device time in the part read",
        "pinned or registered memory peaked at unknown",
        "commands incomplete at the end and records dropped: unknown",
    ] {
        assert!(r.stdout.contains(needle), "{needle:?} in\n{}", r.stdout);
    }
    assert!(!r.stdout.contains("peaked at 0 B") && !r.stdout.contains("mapping -"));
    assert!(!r.stdout.contains("have no device time"), "{}", r.stdout);
    let r = clxfer_run(&["report", "--format", "json", cut.to_str().unwrap()]);
    let cut_json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(cut_json["cut_short"], true);
    assert_eq!(cut_json["pinned_host_peak_bytes"], Value::Null);
    let d = &cut_json["devices"][0];
    assert_eq!(d["resident_peak_bytes"], Value::Null, "{d}");
    assert_eq!(d["clock_mapping"], Value::Null, "{d}");
    let r = clxfer_run(&["report", whole.to_str().unwrap()]);
    assert!(!r.stdout.contains("unknown"), "{}", r.stdout);
    let r = clxfer_run(&["report", "--format", "json", whole.to_str().unwrap()]);
    let whole_json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(whole_json["cut_short"], false);
    assert!(whole_json["devices"][0]["resident_peak_bytes"].as_u64() > Some(0));
}

/// Issue #23: `-o FILE` names the trace, `{pid}` giving each process of a program that forks its
/// own; each trace's start event says which options were in effect and where each came from; and
/// `--report -` prints the summary at exit as well as writing the trace.
#[test]
fn run_names_the_trace_records_its_options_and_prints_the_summary_too() {
    let dir = fresh_dir("run-output");
    let mut cmd = clxfer();
    cmd.current_dir(&dir)
        .env("CLXFER_RULES", "nvidia")
        .args(["run", "-o", "t/run-{pid}.json", "--report", "-", "--"])
        .arg(program("fork"));
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let traces = checked_traces(&dir.join("t"));
    assert_eq!(
        traces.len(),
        2,
        "the parent's and the child's: {}",
        r.stderr
    );
    let mut pids = Vec::new();
    for t in &traces {
        let name = t.file_name().unwrap().to_str().unwrap();
        let pid = name
            .strip_prefix("run-")
            .and_then(|n| n.strip_suffix(".json"))
            .unwrap_or_else(|| panic!("{name}"));
        pids.push(pid.parse::<u32>().unwrap_or_else(|_| panic!("{name}")));
        let listed = format!("clxfer: trace: {}", t.canonicalize().unwrap().display());
        assert!(r.stderr.contains(&listed), "{listed:?} in\n{}", r.stderr);
        let events = whole(t);
        let start = events
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "clxfer trace start")
            .unwrap();
        assert_eq!(start["args"]["pid"], pids[pids.len() - 1]);
        let options = start["args"]["options"].as_object().unwrap();
        for (var, value, from) in [
            ("CLXFER_OUTPUT", "t/run-{pid}.json", "--output"),
            ("CLXFER_REPORT", "-", "--report"),
            ("CLXFER_RULES", "nvidia", "environment"),
            ("CLXFER_MODE", "trace", "default"),
            ("CLXFER_DEVICE_TIMING", "on", "default"),
        ] {
            assert_eq!(
                options[var],
                serde_json::json!({"value": value, "from": from}),
                "{var} in {name}"
            );
        }
        let mut listed: Vec<&str> = options.keys().map(String::as_str).collect();
        let mut want: Vec<&str> = clxfer::config::OPTIONS
            .iter()
            .filter(|o| !o.testing_only())
            .map(|o| o.var)
            .collect();
        listed.sort();
        want.sort();
        assert_eq!(listed, want, "every option but the testing-only ones");
    }
    assert_ne!(pids[0], pids[1]);
    // The summary of each process on stderr, with the trace.
    for pid in pids {
        assert!(
            r.stderr.contains(&format!("(pid {pid})")) && r.stderr.contains("clxfer summary"),
            "no summary of {pid} in\n{}",
            r.stderr
        );
    }
}

/// Issue #23: `clxfer report --format csv`: a row per command, host and device halves joined,
/// and the report's tables, read back by Python's csv module as a spreadsheet user would.
#[test]
fn report_exports_commands_and_tables_as_csv() {
    let dir = fresh_dir("report-csv");
    let r = clxfer_run(&[
        "run",
        "--rules",
        "nvidia",
        "--out",
        dir.to_str().unwrap(),
        "--",
        program("transfers").to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let trace = checked_traces(&dir).remove(0);
    let events = whole(&trace);
    let events = events.as_array().unwrap();
    let enqueues = |device: bool| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == "enqueue")
            .filter(|e| (e["pid"].as_u64().unwrap() >= 1 << 31) == device)
            .count()
    };
    // Python's csv module: the columns, one row per command, the device halves where they are.
    let read = |table: &str| {
        let csv = clxfer_run(&[
            "report",
            "--format",
            "csv",
            "--table",
            table,
            trace.to_str().unwrap(),
        ]);
        assert_eq!(csv.code, Some(0), "{}", csv.stderr);
        let script = "import csv, json, sys\n\
                      rows = list(csv.DictReader(sys.stdin))\n\
                      print(json.dumps(rows))";
        let mut py = std::process::Command::new("python3");
        py.args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = py.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(csv.stdout.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        serde_json::from_slice::<Vec<serde_json::Map<String, Value>>>(&out.stdout).unwrap()
    };
    let commands = read("commands");
    assert_eq!(commands.len(), enqueues(false));
    let timed = commands.iter().filter(|c| c["device_us"] != "").count();
    assert_eq!(timed, enqueues(true));
    let columns: Vec<&str> = commands[0].keys().map(String::as_str).collect();
    for c in clxfer::report::csv::COMMAND_COLUMNS {
        assert!(columns.contains(&c.0), "{} missing", c.0);
    }
    // Each row is its command's: the host slice's bytes and the device slice's start.
    for c in &commands {
        let id: u64 = c["command"].as_str().unwrap().parse().unwrap();
        let host = events
            .iter()
            .find(|e| e["cat"] == "enqueue" && e["ph"] == "X" && e["args"]["command"] == id)
            .unwrap();
        assert_eq!(
            c["bytes"].as_str().unwrap(),
            host["args"]["bytes"].to_string()
        );
        assert_eq!(
            c["api"].as_str().unwrap(),
            host["args"]["api"].as_str().unwrap()
        );
        if let Some(dev) = events.iter().find(|e| {
            e["ph"] == "X" && e["pid"].as_u64().unwrap() >= 1 << 31 && e["args"]["command"] == id
        }) {
            let start: f64 = c["device_start_us"].as_str().unwrap().parse().unwrap();
            assert_eq!(start, dev["ts"].as_f64().unwrap(), "command {id}");
        }
    }
    // The report's tables: the same calls and findings as its JSON.
    let report: Value = serde_json::from_str(
        &clxfer_run(&["report", "--format", "json", trace.to_str().unwrap()]).stdout,
    )
    .unwrap();
    let transfers = read("transfers");
    let calls: u64 = transfers
        .iter()
        .map(|t| t["calls"].as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    let want: u64 = report["devices"][0]["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, want);
    let findings = read("findings");
    assert_eq!(findings.len(), report["findings"].as_array().unwrap().len());
    assert_eq!(findings[0]["title"], report["findings"][0]["title"]);
    assert_eq!(
        read("operations").len(),
        report["devices"][0]["operations"].as_array().unwrap().len()
    );
}

/// Issue #24: kernels enter the report, and a blocking read behind them is split: the time it
/// waited for the kernels ahead of it, and its own. The live report, the report of the trace and
/// summary mode's say the same; so do the CSV tables.
#[test]
fn kernels_have_a_table_and_a_blocking_read_behind_them_is_split() {
    let prog = program("kernels");
    let (live, from_trace, trace) = live_and_from_trace(&prog, &["8000"], "auto");
    let csv = |table: &str| {
        let r = clxfer_run(&[
            "report",
            "--format",
            "csv",
            "--table",
            table,
            trace.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        r.stdout
    };
    let kernels = csv("kernels");
    let mut lines = kernels.lines();
    assert_eq!(
        lines.next(),
        Some("pid,program,device,kernel,calls,device_ns,median_ns,host_ns,untimed,total_ns")
    );
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!((row[3], row[4]), ("spin", "3"), "{kernels}");
    assert_eq!(
        row[5],
        from_trace["devices"][0]["kernels"][0]["device_ns"].to_string()
    );
    let transfers = csv("transfers");
    let head: Vec<&str> = transfers.lines().next().unwrap().split(',').collect();
    let at = head.iter().position(|c| *c == "waited_ns").unwrap();
    let read = transfers.lines().find(|l| l.contains(",D2H,")).unwrap();
    let waited: u64 = read.split(',').nth(at).unwrap().parse().unwrap();
    assert!(waited > 0, "{transfers}");
    let check = |r: &Value, what: &str| {
        let d = &r["devices"][0];
        let k = &d["kernels"][0];
        assert_eq!(k["name"], "spin", "{what}: {d}");
        assert_eq!(k["calls"], 3, "{what}");
        let kernel_ns = k["device_ns"].as_u64().unwrap();
        assert!(kernel_ns > 0, "{what}");
        let read = d["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["direction"] == "D2H")
            .unwrap();
        let (host, waited) = (
            read["host_ns"].as_u64().unwrap(),
            read["waited_ns"].as_u64().unwrap(),
        );
        // The read was enqueued right behind the three launches: it waited for most of them.
        assert!(
            waited * 2 >= kernel_ns,
            "{what}: waited {waited} of kernels' {kernel_ns}"
        );
        assert!(waited <= host, "{what}");
        (kernel_ns, waited)
    };
    assert_eq!(check(&live, "live"), check(&from_trace, "from the trace"));
    assert_eq!(
        live["devices"][0]["kernels"],
        from_trace["devices"][0]["kernels"]
    );
    // What bounds the run: the kernels, which the blocking read waited for, lead the critical
    // path with (nearly) all their device time; the live report and the trace's agree.
    let (kernel_ns, _) = check(&live, "live");
    let top = &live["bounds"]["top"][0];
    assert_eq!(top["what"], "kernel spin", "{}", live["bounds"]);
    let on_path = top["ns"].as_u64().unwrap();
    assert!(
        on_path <= kernel_ns && on_path * 10 >= kernel_ns * 9,
        "{on_path} of {kernel_ns}"
    );
    assert_eq!(live["bounds"], from_trace["bounds"]);
    let wall = live["wall_ns"].as_u64().unwrap();
    let sum: u64 = (live["bounds"]["top"].as_array().unwrap().iter())
        .map(|c| c["ns"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, wall, "the path covers the run");
    // Summary mode times kernels too.
    let r = run(
        &prog,
        Load::Layer,
        &[("CLXFER_MODE", "summary"), ("CLXFER_REPORT", "-")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let table = r
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("  kernel "))
        .nth(1)
        .unwrap_or("");
    assert!(
        table.trim_start().starts_with("spin") && table.contains(" 3 "),
        "{}",
        r.stderr
    );
    let bound = r
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("what bounds the run"))
        .find(|l| l.starts_with("  "))
        .unwrap_or("");
    assert!(bound.contains(" kernel spin ("), "{}", r.stderr);
}

/// Issue #24 (question 2 of the brief: does my pipeline overlap?): a device's busy time, and the
/// time a transfer and a kernel ran at once: most of the transfer time when they go to two
/// queues, none when one in-order queue serialises them. Live, from the trace and in summary mode.
#[test]
fn overlap_of_transfers_with_kernels_is_measured_per_device() {
    let prog = program("overlap");
    for (variant, overlaps) in [("overlap", true), ("serial", false)] {
        let (live, from_trace, _) = live_and_from_trace(&prog, &[variant], "auto");
        assert_eq!(
            live["devices"][0]["busy"], from_trace["devices"][0]["busy"],
            "{variant}"
        );
        // Summary mode: device times on the device's own clock, the same figures.
        let summary = fresh_dir("overlap-summary").join("r.json");
        let mut cmd = command(&prog, Load::Layer);
        cmd.arg(variant)
            .env("CLXFER_MODE", "summary")
            .env("CLXFER_REPORT", &summary);
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let summary = json(&summary);
        for (what, busy) in [
            ("trace", &live["devices"][0]["busy"]),
            ("summary", &summary["devices"][0]["busy"]),
        ] {
            let n = |k: &str| busy[k].as_u64().unwrap_or_else(|| panic!("{what}: {busy}"));
            let (transfer, kernel, overlap) = (n("transfer_ns"), n("kernel_ns"), n("overlap_ns"));
            assert!(transfer > 0 && kernel > 0, "{variant} {what}: {busy}");
            assert!(n("busy_ns") <= n("span_ns"), "{variant} {what}: {busy}");
            if overlaps {
                assert!(overlap * 2 > transfer, "{variant} {what}: {busy}");
            } else {
                assert_eq!(overlap, 0, "{variant} {what}: {busy}");
            }
        }
        // Per queue: the kernels' queue and the writes' queue, or the one queue.
        let queues = live["devices"][0]["queues"].as_array().unwrap();
        assert_eq!(
            queues.len(),
            if overlaps { 2 } else { 1 },
            "{variant}: {queues:?}"
        );
        if overlaps {
            let busy = |i: usize, k: &str| queues[i]["busy"][k].as_u64().unwrap();
            assert!(
                busy(0, "kernel_ns") > 0 && busy(1, "kernel_ns") == 0,
                "{queues:?}"
            );
            assert!(
                busy(1, "transfer_ns") > busy(0, "transfer_ns"),
                "{queues:?}"
            );
        }
        assert_eq!(
            live["devices"][0]["queues"],
            from_trace["devices"][0]["queues"]
        );
    }
}

/// Question 2 of the brief, "does my pipeline overlap?", answered with its cause: the port's
/// uploads wait in the copy queue's order behind read-backs that wait for their kernels, so
/// nothing overlaps, and the first finding says so, with its saving by replay; with the
/// read-backs on a queue of their own (`PIPELINE_READ_QUEUE=1`) the uploads overlap the kernels
/// and there is nothing of the kind to find. NVIDIA's rules (forced, projected), every command
/// timed so that every one is in the graph.
#[test]
fn a_pipeline_held_by_its_queue_order_is_told_why_it_does_not_overlap() {
    let prog = program("pipeline");
    let report = |own_queue: &str| {
        let out = fresh_dir("queue-order").join("r.json");
        let mut cmd = command(&prog, Load::Layer);
        cmd.args(["pinned", "4", "16"])
            .env("PIPELINE_READ_QUEUE", own_queue)
            .env("CLXFER_MODE", "summary")
            .env("CLXFER_RULES", "nvidia")
            .env("CLXFER_DEVICE_TIMING", "all")
            .env("CLXFER_REPORT", &out);
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        json(&out)
    };
    let held = report("0");
    let f = &held["findings"][0];
    assert_eq!(f["kind"], "queue-order", "{}", held["findings"]);
    // Uploads 2, 3 and 4 each follow the read-back before them.
    let title = f["title"].as_str().unwrap();
    assert!(
        title.starts_with("3 transfers on in-order queue #1 of device #1"),
        "{title}"
    );
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("the first held: Write H2D pinned, queued after Read D2H pinned on queue #1, which waited for kernel twice on queue #2"),
        "{evidence}"
    );
    assert!(f["saving_ns"].as_u64() > Some(0), "{f}");
    assert!(
        f["estimate"].as_str().unwrap().starts_with("replayed"),
        "{f}"
    );
    let busy = |r: &Value| r["devices"][0]["busy"]["overlap_ns"].as_u64().unwrap();
    assert_eq!(busy(&held), 0);
    let own = report("1");
    assert!(
        !own["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "queue-order"),
        "{}",
        own["findings"]
    );
    assert!(busy(&own) > 0, "{}", own["devices"][0]["busy"]);
}

/// Issue #26, the porting question "is my mlock'd memory pinned?": the staged-writes finding says
/// how many came from locked memory, and that mlock does not help.
#[test]
fn the_staged_finding_answers_whether_mlock_pins() {
    let (report, _, _) = live_and_from_trace(&program("transfers"), &[], "nvidia");
    // One finding for the host side, both directions and the calls that held the host
    // (issue #57).
    let staged: Vec<&Value> = (report["findings"].as_array().unwrap().iter())
        .filter(|f| f["kind"] == "staged-pageable")
        .collect();
    assert_eq!(staged.len(), 1, "{staged:?}");
    let staged = staged[0];
    let evidence = staged["evidence"].to_string();
    // The reads are from malloc'd memory that was never locked: one transfer of the two
    // directions' came from locked memory.
    assert!(
        evidence.contains("H2D: ")
            && evidence.contains("D2H: ")
            && evidence.contains("of them, 1 transfer (1.00 MiB) from memory locked with mlock"),
        "{evidence}"
    );
    assert!(
        staged["fix"]
            .as_str()
            .unwrap()
            .contains("mlock does not help")
    );
    // The pipeline's question: under NVIDIA's rules the held calls cannot overlap.
    assert!(
        staged["title"].as_str().unwrap().contains("held the host")
            && evidence.contains("cannot overlap"),
        "{staged}"
    );
    assert!(
        !report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "nonblocking-held-host")
    );
    // Its saving is projected (PoCL's call times are not NVIDIA's), and replayed where the
    // graph has the calls; PoCL's time in the calls is not shown as NVIDIA's.
    let estimate = staged["estimate"].as_str().unwrap();
    assert!(
        estimate.starts_with("projected")
            || estimate.starts_with("replayed: the run's command graph, its durations projected"),
        "{staged}"
    );
    assert!(
        !evidence.contains("inside the calls"),
        "PoCL's time in the calls shown as NVIDIA's: {staged}"
    );
}

/// Issue #26: a lookup of a function no implementation has (clEnqueueMemObjectRegisterKHR, which
/// porting advice recommends) gets one `clxfer:` line however often it is asked, and a finding
/// with the mechanisms that exist; a function this platform lacks is counted in a finding of its
/// own; the live report and the report of the trace agree; the program sees the driver's NULL.
#[test]
fn a_function_no_implementation_has_gets_one_line_and_a_finding() {
    let prog = program("lookup");
    let plain = run(&prog, Load::None, &[]);
    assert!(
        plain.stdout.contains("clEnqueueMemObjectRegisterKHR: NULL"),
        "{}",
        plain.stdout
    );
    for load in [Load::Layer, Load::Preload] {
        let r = run(
            &prog,
            load,
            &[("CLXFER_MODE", "summary"), ("CLXFER_LOG", "warn")],
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        let line = r.one_line("asked for clEnqueueMemObjectRegisterKHR");
        assert!(line.contains("no OpenCL implementation has"), "{line}");
        assert!(line.contains("CL_MEM_USE_HOST_PTR"), "{line}");
        // The missing extension function is no warning (programs probe for them): it is said
        // at CLXFER_LOG=info only.
        assert!(
            !r.stderr.contains("clxfer: this platform offers no"),
            "{}",
            r.stderr
        );
        let info = run(&prog, load, &[("CLXFER_MODE", "summary")]);
        info.one_line("this platform offers no clNoSuchFunctionEXT");
    }
    let (live, from_trace, _) = live_and_from_trace(&prog, &[], "nvidia");
    assert_eq!(live, from_trace);
    let k = kinds(&live);
    assert!(k.contains(&"no-such-function".to_string()), "{k:?}");
    let offered = live["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "function-not-offered")
        .expect("the lacking function's finding");
    assert!(
        offered["evidence"][0]
            .as_str()
            .unwrap()
            .starts_with("clNoSuchFunctionEXT:")
    );
}

/// Issue #26, question 2 of the brief: one large ALLOC_HOST_PTR staging region used in 1 MiB
/// blocks is told what a ring of three blocks would cost instead, not "one per data buffer".
#[test]
fn the_staging_advice_fits_the_program_s_block() {
    let (report, _, _) = live_and_from_trace(&program("staging"), &[], "nvidia");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "alloc-host-ptr-device-memory")
        .expect("the ALLOC_HOST_PTR finding");
    let fix = f["fix"].as_str().unwrap();
    assert!(
        fix.starts_with(
            "The program's ALLOC_HOST_PTR region (16.0 MiB) takes device memory of its size"
        ),
        "{fix}"
    );
    // Sized from the program (issue #57): its 1 MiB block, one moving at once, checked.
    assert!(
        fix.contains(
            "a ring of 3 mapped CL_MEM_ALLOC_HOST_PTR buffers of the program's transfer size \
             (1.00 MiB; 1 moving at once at most"
        ),
        "{fix}"
    );
    assert!(fix.contains("3.00 MiB of device memory"), "{fix}");
    assert!(!fix.contains("one per data buffer"), "{fix}");
}
