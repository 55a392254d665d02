//! Sampled device timing (issue #27) on PoCL: every command classified whether timed or not,
//! every transfer of 1 MiB or more timed, the untimed ones said so in the trace and extrapolated
//! in the report, and clxfer's own cost stated; `CLXFER_DEVICE_TIMING=all` times every command.

mod common;

use clxfer::vocab::schema;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn events(path: &Path) -> Vec<Value> {
    clxfer::trace::read::read_file(path).unwrap().events
}

/// The storm's enqueues: host slices with a `command`.
fn enqueues(ev: &[Value]) -> Vec<&Value> {
    ev.iter()
        .filter(|e| e["ph"] == "X" && e["args"][schema::COMMAND.name].is_u64())
        .filter(|e| e["pid"].as_u64() < Some(1 << 31))
        .collect()
}

fn device_slices(ev: &[Value]) -> usize {
    ev.iter()
        .filter(|e| e["ph"] == "X" && e["pid"].as_u64() >= Some(1 << 31))
        .count()
}

fn end_device(ev: &[Value]) -> &Value {
    let end = ev.iter().find(|e| e["name"] == schema::TRACE_END).unwrap();
    &end["args"][schema::DEVICES.name][0]
}

fn report_of(trace: &Path) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_clxfer"));
    cmd.args(["report", "--format", "json"]).arg(trace);
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// The storm (20,000 small enqueues on one thread, far more than the budget times), classified
/// by NVIDIA's rules.
fn run_storm(timing: &str) -> Run {
    let mut cmd = command(program("storm"), Load::Layer);
    // NVIDIA's price (7 µs a timed command): a storm slower than 448 µs an enqueue would be
    // needed to have every command timed, however loaded this machine.
    cmd.args(["20000", "1"])
        .env("CLXFER_DEVICE_TIMING", timing)
        .env("CLXFER_RULES", "nvidia");
    run_cmd(cmd, Duration::from_secs(180))
}

fn storm(timing: &str) -> (Vec<Value>, Value) {
    let r = run_storm(timing);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let trace = &r.traces[0];
    (events(trace), report_of(trace))
}

#[test]
fn a_storm_is_sampled_every_command_classified_and_the_rest_extrapolated() {
    let r = run_storm("on");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let host = enqueues(&ev);
    let sampled = host
        .iter()
        .filter(|e| e["args"][schema::DEVICE_TIME.name] == "sampled")
        .count();
    let d = end_device(&ev);
    let timed = d[schema::TIMED.name].as_u64().unwrap() as usize;
    assert_eq!(d[schema::SAMPLED.name].as_u64().unwrap() as usize, sampled);
    // Every enqueue is timed or sampled out, and each timed one has its device slice.
    assert_eq!(timed + sampled, host.len());
    assert_eq!(device_slices(&ev), timed);
    // Within the budget: the timed commands' price is at most what 1/64 of the run's time
    // earned and the credit a queue starts with (less where a stall filled the credit up).
    use clxfer::timing::sample::{BUDGET_DIV, CAP_NS};
    let price = clxfer::model::rules::NVIDIA.timed_command_us * 1e3;
    let ts = |e: &Value| (e["ts"].as_f64().unwrap() * 1e3) as i64;
    let elapsed = ts(host.last().unwrap()) - ts(host[0]);
    let earned = elapsed / BUDGET_DIV as i64;
    let spent = (timed as f64 * price) as i64;
    assert!(
        spent <= earned + CAP_NS + price as i64 && timed > 0,
        "{timed} timed at {price} ns: {spent} ns spent, {earned} ns earned in {elapsed} ns"
    );
    assert!(sampled > 0, "{timed} timed, {sampled} sampled");
    // The classification does not depend on timing: every enqueue has its path.
    assert!(
        host.iter()
            .all(|e| e["args"][schema::PATH.name].is_string())
    );

    let report = report_of(&r.traces[0]);
    let dev = &report["devices"][0];
    assert_eq!(dev["sampled_out"].as_u64().unwrap() as usize, sampled);
    let mut extrapolated = 0;
    for row in dev["transfers"].as_array().unwrap() {
        let s = &row["sampled"];
        let calls = row["calls"].as_u64().unwrap();
        let (t, n) = (row["timed"].as_u64().unwrap(), s["calls"].as_u64().unwrap());
        assert_eq!(t + n, calls, "{row}");
        // NVIDIA's rules are forced on PoCL: an untimed call's time is its projection, known
        // from its size as every other call's is, not PoCL's sample extrapolated.
        assert_eq!(s["projected"], true, "{row}");
        // (A row that moves nothing has no projection: no time, as for its timed calls.)
        let each = row["projected_ns"].as_f64().unwrap_or(0.0) / calls as f64;
        let est = s["estimated_ns"].as_u64().unwrap() as f64;
        assert!((est - each * n as f64).abs() <= n as f64, "{row}");
        extrapolated += n;
    }
    assert!(extrapolated > 0);
    // The device's busy time is whole (the untimed calls at their estimate), and so are its
    // queues': they take its estimate between them.
    let busy = &dev["busy"];
    let estimated = busy["estimated_ns"].as_u64().unwrap();
    assert!(estimated > 0, "{busy}");
    let queues = dev["queues"].as_array().unwrap();
    let parts: u64 = (queues.iter())
        .map(|q| q["busy"]["estimated_ns"].as_u64().unwrap())
        .sum();
    assert!(
        parts.abs_diff(estimated) <= queues.len() as u64,
        "{busy} {queues:?}"
    );
    for q in queues {
        let b = &q["busy"];
        let of = |k: &str| b[k].as_u64().unwrap();
        assert!(of("busy_ns") >= of("estimated_ns") && of("transfer_ns") >= of("estimated_ns"));
    }
    // clxfer's own cost, with the same counts as the trace's end.
    let o = &report["overhead"];
    assert_eq!(o["timed_commands"].as_u64().unwrap() as usize, timed);
    assert_eq!(o["sampled_out"].as_u64().unwrap() as usize, sampled);
    assert!(o["layer_ns"].as_u64().unwrap() > 0 && o["measured_calls"].as_u64().unwrap() > 0);
    assert!(o["writer_cpu_ns"].as_u64().unwrap() > 0);
    assert!(o["driver_ns"].as_u64().unwrap() > 0);
    // The driver's share: clxfer's own driver calls measured (carried in the trace's end), the
    // rest estimated by the rules, never less than what was measured.
    let measured = o["driver_measured_ns"].as_u64().unwrap();
    assert!(measured > 0, "{o}");
    assert_eq!(
        measured,
        end_device(&ev)[schema::DRIVER_NS.name].as_u64().unwrap(),
        "{o}"
    );
    assert!(o["driver_ns"].as_u64().unwrap() >= measured, "{o}");
    assert!(
        (o["driver_estimate"].as_str().unwrap()).contains("measured in clxfer's own driver calls"),
        "{o}"
    );
}

#[test]
fn all_times_every_command_and_off_none() {
    let (ev, report) = storm("all");
    let host = enqueues(&ev);
    let d = end_device(&ev);
    assert_eq!(d[schema::SAMPLED.name], 0);
    assert_eq!(d[schema::TIMED.name].as_u64().unwrap() as usize, host.len());
    assert_eq!(device_slices(&ev), host.len());
    let dev = &report["devices"][0];
    assert_eq!(dev["sampled_out"], 0);
    assert!(
        dev["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["sampled"].is_null())
    );
    let (ev, report) = storm("off");
    assert_eq!(device_slices(&ev), 0);
    assert_eq!(end_device(&ev)[schema::TIMED.name], 0);
    assert_eq!(report["overhead"]["timed_commands"], 0);
}

#[test]
fn every_transfer_of_a_mebibyte_or_more_keeps_its_device_time() {
    // The demo: 256 small staged writes among 16 MiB transfers (always timed).
    for (rules, mode) in [
        ("auto", "trace"),
        ("nvidia", "trace"),
        ("nvidia", "summary"),
    ] {
        let dir = fresh_dir("sampling-demo");
        let report = dir.join("report.json");
        let r = run(
            program("demo"),
            Load::Layer,
            &[
                ("CLXFER_RULES", rules),
                ("CLXFER_MODE", mode),
                ("CLXFER_REPORT", report.to_str().unwrap()),
                // One small command in 4, whatever this machine's pace (the budget's own test
                // is the storm's, above).
                ("CLXFER_TEST_SAMPLE_EVERY", "4"),
            ],
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        if mode == "trace" {
            let ev = events(&r.traces[0]);
            let large: Vec<&Value> = enqueues(&ev)
                .into_iter()
                .filter(|e| e["args"][schema::BYTES.name].as_u64() >= Some(1 << 20))
                .collect();
            assert!(large.len() >= 8);
            for e in large {
                assert!(
                    e["args"][schema::DEVICE_TIME.name].is_null(),
                    "{rules}: {e}"
                );
            }
        }
        let live: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let dev = &live["devices"][0];
        // Sampled: the small writes' row says how many were extrapolated from the timed ones
        // of their size (PoCL's own rules), or projected for their sizes (NVIDIA's, forced).
        let staged: Vec<&Value> = (dev["transfers"].as_array().unwrap().iter())
            .filter(|r| r["sampled"].is_object())
            .collect();
        assert!(!staged.is_empty(), "{rules} {mode}: {dev}");
        for row in staged {
            let s = &row["sampled"];
            match rules {
                "auto" => assert!(
                    s["sample"].as_u64() > Some(0) && s["projected"].is_null(),
                    "{rules} {mode}: {row}"
                ),
                _ => assert_eq!(s["projected"], true, "{rules} {mode}: {row}"),
            }
        }
    }
}

/// The USM storm (`enqueues` USM memcpys on one thread) on the test ICD, which honours
/// clSetCommandQueueProperty and whose commands complete at once, classified by NVIDIA's rules.
fn nvidia_usm_storm(enqueues: &str) -> std::process::Command {
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.args([enqueues, "1", "usm"])
        .env("OCL_ICD_VENDORS", vendors_dir(true))
        .env("TEST_PLATFORM", "clxfer test ICD")
        .env("CLXFER_RULES", "nvidia");
    cmd
}

#[test]
fn where_profiling_costs_every_command_it_is_turned_on_only_for_those_timed() {
    // The test ICD honours clSetCommandQueueProperty and gives profiling times only to commands
    // enqueued while the queue profiles; NVIDIA's rules say to toggle. The USM storm there.
    let r = run_cmd(nvidia_usm_storm("20000"), Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let queue = ev
        .iter()
        .find(|e| e["name"] == "thread_name" && e["pid"].as_u64() >= Some(1 << 31))
        .unwrap();
    assert!(
        queue["args"]["name"]
            .as_str()
            .unwrap()
            .contains("profiling per timed command"),
        "{queue}"
    );
    let d = end_device(&ev);
    let (timed, sampled) = (
        d[schema::TIMED.name].as_u64().unwrap(),
        d[schema::SAMPLED.name].as_u64().unwrap(),
    );
    assert!(
        timed > 0 && sampled > timed,
        "{timed} timed, {sampled} sampled"
    );
    // Every timed command had its profiling on: a measured device slice each.
    let device: Vec<&Value> = ev
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"].as_u64() >= Some(1 << 31))
        .collect();
    assert_eq!(device.len() as u64, timed);
    assert!(
        device
            .iter()
            .all(|e| e["args"][schema::DEVICE_TIME.name].is_null())
    );
    assert_eq!(d[schema::UNAVAILABLE.name], 0);
    // Each timed command had its switches, timed on the calling thread: what they took is part
    // of timing's price (the budget spends it) and of the own-cost line.
    let (toggles, toggle_ns) = (
        d[schema::TOGGLES.name].as_u64().unwrap(),
        d[schema::TOGGLE_NS.name].as_u64().unwrap(),
    );
    assert!(
        toggles == timed && toggle_ns > 0,
        "{toggles} toggles in {toggle_ns} ns"
    );
    let report = report_of(&r.traces[0]);
    let own = &report["overhead"];
    assert_eq!(own["toggles"], toggles, "{own}");
    assert!(
        own["driver_estimate"]
            .as_str()
            .unwrap()
            .contains(&format!("switched on and off around {toggles} of them")),
        "{own}"
    );
}

#[test]
fn a_program_that_waits_gets_no_completion_callbacks_from_a_deferring_vendor() {
    // NVIDIA's rules arm a callback at most every 100 ms, and none within 100 ms of the
    // program's last wait on the queue: the storm waits (clFinish) every 64 commands, so only
    // the first timed command, before any wait, gets one, however long the run.
    let json = fresh_dir("waits-callbacks").join("report.json");
    let mut cmd = nvidia_usm_storm("400000");
    cmd.env("CLXFER_MODE", "summary")
        .env("CLXFER_REPORT", &json);
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let own = &report["overhead"];
    let wall_ms = report["wall_ns"].as_u64().unwrap() / 1_000_000;
    // Long enough that a callback every 100 ms would have been several.
    assert!(wall_ms >= 300, "the storm ran {wall_ms} ms");
    assert!(own["timed_commands"].as_u64() > Some(100), "{own}");
    assert_eq!(own["callbacks"], 1, "{own}");
}

#[test]
fn the_timer_thread_sleeps_while_the_program_waits() {
    // PoCL's rules defer callbacks too (a gap of 10 ms): the storm waits every 64 commands, so
    // its queue is deferred again and again. The timer thread sleeps until a deferred queue's
    // gap has passed; it once woke itself at every round and spun on the queue's lock for as
    // long as the program kept waiting (540 ms of CPU in a 680 ms storm).
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.args(["100000", "1"]).env("CLXFER_MODE", "summary");
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let value = |key: &str| -> f64 {
        r.stdout
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("the storm prints {key}: {}", r.stdout))
    };
    let wall_us = value("us_per_enqueue") * 100_000.0;
    let timer_us = value("timer_cpu_us");
    assert!(
        timer_us <= 0.05 * wall_us,
        "the timer thread ran {timer_us} µs of CPU in a {wall_us} µs storm"
    );
}
