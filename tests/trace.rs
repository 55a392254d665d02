//! The Chrome trace of real programs on PoCL: one slice per call, one device slice and one arrow
//! per enqueue, classes in the names, the classification in the args, metadata, counters; traces
//! of killed and forked programs; a directory that cannot be written.

mod common;

use clxfer::vocab::schema;
use common::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

fn events(path: &Path) -> Vec<Value> {
    clxfer::trace::read::read_file(path).unwrap().events
}

/// The records the trace's end says were dropped, of every kind.
fn dropped_in(end: &Value) -> u64 {
    end["dropped"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

fn host_pid(ev: &[Value]) -> u64 {
    ev.iter()
        .find(|e| e["name"] == schema::TRACE_START)
        .unwrap()["pid"]
        .as_u64()
        .unwrap()
}

/// `saw N OpenCL calls` from the exit report.
fn calls_seen(r: &Run) -> u64 {
    let line = r.reports()[0];
    line["clxfer: saw ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn bandwidths_in_the_trace_are_measured_where_the_rules_are_the_device_s_own() {
    // Issue #26: host GB/s only where the call's time is the transfer's (blocking calls), device
    // GB/s on every timed transfer, and no projection when the rules describe the device.
    let r = run(
        program("transfers"),
        Load::Layer,
        &[("POCL_DEVICES", "pthread pthread")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let with = |key: &str, blocking: bool| {
        (ev.iter())
            .filter(|e| e["args"]["blocking"] == blocking && e["args"].get(key).is_some())
            .count()
    };
    assert_eq!(
        with("host_gbps", false),
        0,
        "host_gbps on a non-blocking call"
    );
    assert!(
        with("host_gbps", true) > 0,
        "no blocking call has host_gbps"
    );
    assert!(ev.iter().all(|e| e["args"].get("projected_us").is_none()));
    let device_gbps = (ev.iter())
        .filter(|e| e["cat"] == "enqueue" && e["args"].get("device_gbps").is_some())
        .count();
    assert!(device_gbps > 0, "no device slice has device_gbps");
}

#[test]
fn transfers_trace_has_every_call_every_command_and_one_arrow_each() {
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let env = [
            ("POCL_DEVICES", "pthread pthread"),
            ("CLXFER_RULES", "nvidia"),
        ];
        let r = run(program("transfers"), load, &env);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.traces.len(), 1, "{load:?}: one trace per process");
        let name = r.traces[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("clxfer-transfers-") && name.ends_with(".json"),
            "{name}"
        );
        let ev = events(&r.traces[0]);
        let pid = host_pid(&ev);

        // Host: one slice per OpenCL call the program made.
        let host: Vec<&Value> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid)
            .collect();
        assert_eq!(
            host.len() as u64,
            calls_seen(&r),
            "{load:?}: one host slice per call"
        );

        // Device: one slice per timed enqueue, joined by exactly one flow at both slices' ts.
        let enqueues: Vec<&Value> = host
            .iter()
            .copied()
            .filter(|e| e["cat"] == "enqueue")
            .collect();
        let device: HashMap<u64, &Value> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] != pid)
            .map(|e| (e["args"]["command"].as_u64().unwrap(), e))
            .collect();
        assert!(enqueues.len() >= 38, "{}", enqueues.len());
        assert_eq!(
            device.len(),
            enqueues.len(),
            "{load:?}: one device slice per enqueue"
        );
        let flows = |ph: &str| -> HashMap<u64, &Value> {
            ev.iter()
                .filter(|e| e["ph"] == ph)
                .map(|e| (e["id"].as_u64().unwrap(), e))
                .collect()
        };
        let (starts, ends) = (flows("s"), flows("f"));
        for h in &enqueues {
            let id = h["args"]["command"].as_u64().unwrap();
            let d = device[&id];
            let (s, f) = (starts[&id], ends[&id]);
            assert_eq!(
                (&s["ts"], &s["tid"]),
                (&h["ts"], &h["tid"]),
                "flow {id} starts at the call"
            );
            assert_eq!(
                (&f["ts"], &f["tid"], &f["pid"]),
                (&d["ts"], &d["tid"], &d["pid"])
            );
            assert!(
                d["ts"].as_f64() >= h["ts"].as_f64(),
                "device slice {id} before its call"
            );
            assert_eq!(h["args"]["path"], d["args"]["path"]);
        }
        assert_eq!((starts.len(), ends.len()), (enqueues.len(), enqueues.len()));

        // QUEUED and SUBMIT are asked of kernels, transfers of 1 MiB or more and one other
        // command in 16 (by a Fibonacci hash of its number, `finish::phases`); the rest of the
        // measured slices go without them.
        let mut asked = [0, 0];
        for h in &enqueues {
            let id = h["args"]["command"].as_u64().unwrap();
            let d = device[&id];
            if d["args"].get("device_time").is_some() {
                continue;
            }
            let big = h["args"]["bytes"].as_u64().unwrap_or(0) >= 1 << 20;
            let kernel = d["name"].as_str().unwrap().starts_with("Kernel ");
            let want = kernel || big || id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60 == 0;
            let has = d["args"].get("queued_to_submit_us").is_some();
            assert_eq!(has, want, "{load:?}: command {id} ({}): {d}", h["name"]);
            assert_eq!(has, d["args"].get("submit_to_start_us").is_some(), "{d}");
            asked[has as usize] += 1;
        }
        assert!(asked[0] > 0 && asked[1] > 0, "{load:?}: asked of {asked:?}");

        // Names carry the class; args carry the classification.
        let names: HashSet<&str> = device.values().filter_map(|d| d["name"].as_str()).collect();
        for want in [
            "Write H2D staged",
            "Write H2D pinned",
            "Read D2H staged",
            "Map D2H pinned",
            "Migrate D2D via-host",
        ] {
            assert!(names.contains(want), "{load:?}: no {want:?} in {names:?}");
        }
        assert!(
            names.iter().any(|n| n.starts_with("Kernel scale")),
            "{names:?}"
        );
        let staged = host
            .iter()
            .find(|e| e["name"] == "clEnqueueWriteBuffer H2D staged")
            .expect("a staged write on the host track");
        let a = &staged["args"];
        assert_eq!(
            (&a["path"], &a["direction"], &a["host_memory"]),
            (&"staged".into(), &"H2D".into(), &"pageable".into())
        );
        assert!(
            a["reasons"][0]
                .as_str()
                .unwrap()
                .starts_with("[any.pageable]"),
            "{a}"
        );
        assert!(
            a["rule_ids"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "nvidia.pageable"),
            "{a}"
        );
        assert!(a["host_ptr"].as_str().unwrap().starts_with("0x"));
        // The NVIDIA cost model's time for it, not PoCL's bandwidth (issue #26).
        let cost = clxfer::model::rules::NVIDIA.cost.unwrap();
        let projected = cost.time_ns(
            clxfer::model::classification::Direction::H2D,
            clxfer::model::classification::Path::Staged,
            a["bytes"].as_u64().unwrap(),
        );
        let us = a["projected_us"].as_f64().unwrap();
        assert!((us * 1e3 - projected.unwrap() as f64).abs() < 1.0, "{a}");
        assert!(a.get("host_gbps").is_none(), "{a}");
        assert_eq!(a["mem_objects"][0]["kind"], "buffer");
        assert_eq!(a["mem_objects"][0]["flags"], "READ_WRITE");
        // Flags decoded, each value rendered once and reused: every map of the program says its own.
        let mut map_flags: Vec<&str> = host
            .iter()
            .filter(|e| e["args"]["api"] == "clEnqueueMapBuffer")
            .map(|e| e["args"]["map_flags"].as_str().unwrap())
            .collect();
        map_flags.dedup();
        assert_eq!(
            map_flags,
            ["WRITE", "READ", "WRITE", "WRITE_INVALIDATE_REGION"],
            "{load:?}"
        );
        let ahp = host
            .iter()
            .find(|e| e["args"]["api"] == "clEnqueueMapBuffer")
            .unwrap();
        assert_eq!(ahp["args"]["mem_objects"][0]["flags"], "ALLOC_HOST_PTR");
        for d in device.values() {
            let args = &d["args"];
            // PoCL times everything; NVIDIA's rules (forced here) take no migration's time, nor
            // a map's that moves nothing (nvidia.borrowed-times).
            let name = d["name"].as_str().unwrap();
            let borrowed = name.starts_with("Migrate") || name == "Map D2H none";
            assert_eq!(
                args.get("device_time").and_then(Value::as_str),
                borrowed.then_some("untrusted"),
                "{d}"
            );
            // Forced rules: no bandwidth from PoCL's time (issue #26); the host slice has the
            // projection.
            assert!(args.get("device_gbps").is_none(), "{d}");
        }

        // Tracks and metadata.
        let meta = |what: &str| -> Vec<String> {
            ev.iter()
                .filter(|e| e["name"] == what)
                .map(|e| e["args"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(meta("process_name").len(), 3, "the program and two devices");
        assert!(
            meta("process_name")
                .iter()
                .any(|n| n.starts_with("device #1 · pthread"))
        );
        assert!(
            meta("thread_name")
                .iter()
                .any(|n| n.starts_with("queue #") && n.contains("(in-order) · profiling forced"))
        );
        let start = &ev
            .iter()
            .find(|e| e["name"] == schema::TRACE_START)
            .unwrap()["args"];
        assert_eq!(start["program"], "transfers");
        assert_eq!(start["clxfer_version"], env!("CARGO_PKG_VERSION"));
        chrono::DateTime::parse_from_rfc3339(start["start_time"].as_str().unwrap()).unwrap();
        let end = &ev.last().unwrap();
        assert_eq!(end["name"], schema::TRACE_END);
        let end = &end["args"];
        assert_eq!(end["devices"].as_array().unwrap().len(), 2);
        for d in end["devices"].as_array().unwrap() {
            assert_eq!(d["rules"], "nvidia");
            assert!(
                ["queued-estimate", "clGetDeviceAndHostTimer"]
                    .contains(&d["clock_mapping"].as_str().unwrap())
            );
        }
        assert_eq!(end["incomplete_at_exit"], 0);
        assert!(
            end["dropped"].as_object().unwrap().values().all(|v| v == 0),
            "{end}"
        );
        assert_eq!(end["events"].as_u64().unwrap() as usize, ev.len());
        let counters: HashSet<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "C")
            .filter_map(|e| e["name"].as_str())
            .collect();
        for want in [
            schema::PINNED_COUNTER,
            schema::IN_FLIGHT_COUNTER,
            schema::RESIDENT_COUNTER,
        ] {
            assert!(
                counters.contains(want),
                "{load:?}: no counter {want:?}: {counters:?}"
            );
        }

        // Under forced rules no call has a host bandwidth: PoCL's time is not NVIDIA's.
        assert!(
            ev.iter().all(|e| e["args"].get("host_gbps").is_none()),
            "{load:?}: host_gbps under forced rules"
        );
        // Every args key is one of the schema's (docs/TRACE.md).
        let known: HashSet<&str> = schema::FIELDS.iter().map(|f| f.key).collect();
        let meta_keys = ["name", "sort_index"];
        for e in &ev {
            if let Some(args) = e["args"].as_object() {
                for k in args.keys() {
                    assert!(
                        known.contains(k.as_str())
                            || meta_keys.contains(&k.as_str())
                            || schema::DROPPED_KINDS.contains(&k.as_str()),
                        "unknown args key {k} in {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn device_timing_off_leaves_queues_alone_and_times_the_host_only() {
    let r = run(
        program("transfers"),
        Load::Layer,
        &[("CLXFER_DEVICE_TIMING", "off")],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let pid = host_pid(&ev);
    assert!(
        ev.iter()
            .filter(|e| e["ph"] == "X")
            .all(|e| e["pid"] == pid),
        "no device slices"
    );
    assert!(
        !ev.iter().any(|e| e["ph"] == "s" || e["ph"] == "f"),
        "no flows"
    );
    assert!(
        ev.iter()
            .any(|e| e["name"] == "clEnqueueWriteBuffer H2D host-copy")
    );
}

/// Where a program started by [`command`] writes its trace (its `CLXFER_DIR`).
fn trace_dir(cmd: &std::process::Command) -> std::path::PathBuf {
    let dir = cmd.get_envs().find(|(k, _)| *k == "CLXFER_DIR");
    dir.and_then(|(_, v)| v).expect("CLXFER_DIR set").into()
}

#[test]
fn a_killed_program_leaves_a_loadable_trace() {
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.arg("100000000");
    let dir = trace_dir(&cmd);
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the trace has grown past its first flushes, then kill without warning.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let size: u64 = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum();
        if size > 1 << 20 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let traces = checked_traces(&dir);
    assert_eq!(traces.len(), 1);
    let trace = clxfer::trace::read::read_file(&traces[0]).unwrap();
    assert!(!trace.closed, "killed: no closing bracket");
    assert!(trace.events.len() > 1000, "{}", trace.events.len());
}

/// A program that never waits through OpenCL (no clFinish, no wait, no blocking call) still gets
/// its device slices while it runs: completion callbacks collect them, including those that
/// NVIDIA's rules defer (at most one callback per queue every `callback_gap_us`), which the timer
/// thread arms.
#[test]
fn device_slices_stream_out_while_a_program_that_never_waits_runs() {
    use std::io::BufRead;
    for rules in ["auto", "nvidia"] {
        let mut cmd = command(program("no_wait"), Load::Layer);
        // Every write timed: each one's slice must come.
        cmd.env("CLXFER_RULES", rules)
            .env("CLXFER_DEVICE_TIMING", "all");
        let dir = trace_dir(&cmd);
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "done 64 writes", "rules {rules}");
        // The device slices (named without the entry point) reach the file while it runs.
        let device_slices = || -> usize {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                return 0;
            };
            entries
                .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .map(|t| {
                    t.lines()
                        .filter(|l| {
                            l.starts_with(r#"{"name":"Write H2D"#) && l.contains(r#""ph":"X""#)
                        })
                        .count()
                })
                .sum()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut found = device_slices();
        while found < 64 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            found = device_slices();
        }
        let alive = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            alive,
            "rules {rules}: the program ended before its slices came"
        );
        assert_eq!(found, 64, "rules {rules}");
        assert_eq!(checked_traces(&dir).len(), 1);
    }
}

#[test]
fn commands_waiting_at_exit_are_counted_and_reported_without_device_time() {
    let r = run(program("in_flight"), Load::Layer, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    assert_eq!(ev.last().unwrap()["args"]["incomplete_at_exit"], 2);
    // Only the first, blocking write has a device slice.
    let host = host_pid(&ev);
    let device_slices = ev.iter().filter(|e| e["ph"] == "X" && e["pid"] != host);
    assert_eq!(device_slices.count(), 1);
    // Summary mode: all three transfers, the two waiting ones without a device time.
    let r = run(
        program("in_flight"),
        Load::Layer,
        &[("CLXFER_MODE", "summary")],
    );
    // A table row (the verdict's lines, which also open with a direction, have a colon).
    let row = |dir: &str| {
        let line = (r.stderr.lines())
            .filter(|l| !l.contains(':'))
            .map(str::split_whitespace);
        line.filter_map(|mut w| (w.next() == Some(dir)).then(|| w.collect::<Vec<_>>()))
            .next()
            .unwrap_or_else(|| panic!("no {dir} row:\n{}", r.stderr))
    };
    // Path, calls, bytes (two words), device time: the writes' is the blocking one's.
    assert_eq!(row("H2D")[1..4], ["2", "2.00", "KiB"], "{}", r.stderr);
    assert_eq!(row("D2H")[1..5], ["1", "1.00", "KiB", "-"], "{}", r.stderr);
}

#[test]
fn after_fork_the_child_writes_its_own_trace_with_only_its_calls() {
    let r = run(program("fork"), Load::Layer, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // The parent and the child that made calls; the exec'd /bin/true made none.
    assert_eq!(r.traces.len(), 2, "{:?}", r.traces);
    let mut by_calls: Vec<(usize, Vec<String>)> = r
        .traces
        .iter()
        .map(|t| {
            let ev = events(t);
            // The parent's read still waiting at the fork is not the child's to count.
            assert_eq!(ev.last().unwrap()["args"]["incomplete_at_exit"], 0);
            let pid = host_pid(&ev);
            let names: Vec<String> = ev
                .iter()
                .filter(|e| e["ph"] == "X" && e["pid"] == pid)
                .map(|e| e["name"].as_str().unwrap().to_string())
                .collect();
            (names.len(), names)
        })
        .collect();
    by_calls.sort();
    assert_eq!(
        by_calls[0].1,
        vec!["clGetDeviceInfo"; 3],
        "the child's own three calls only"
    );
    let parent = &by_calls[1].1;
    assert_eq!(
        parent
            .iter()
            .filter(|n| n.starts_with("clEnqueueWriteBuffer"))
            .count(),
        1,
        "{parent:?}"
    );
}

#[test]
fn an_unwritable_directory_warns_once_and_the_program_runs_on() {
    let prog = program("buffers");
    let plain = run(&prog, Load::None, &[]);
    for (var, value) in [
        ("CLXFER_DIR", "/nonexistent/clxfer"),
        ("CLXFER_DIR", "/proc"),
        ("CLXFER_OUTPUT", "/nonexistent/t-{pid}.json"),
    ] {
        let r = run(&prog, Load::Layer, &[(var, value)]);
        assert_eq!((r.code, &r.stdout), (plain.code, &plain.stdout));
        let warning = r.one_line("cannot create the trace file");
        assert!(warning.contains(var), "{warning}");
    }
}

/// A driver that refuses profiling, reports zero durations, or fails the query (the test ICD):
/// the program runs as without clxfer, and the trace says what was missing.
#[test]
fn a_driver_without_device_times_degrades_to_marked_slices() {
    let vendors = vendors_dir(true);
    let vendors = vendors.to_str().unwrap();
    let prog = program("timing");
    let plain = run(&prog, Load::None, &[("OCL_ICD_VENDORS", vendors)]);
    assert!(
        plain.stdout.contains("timing: 16 copies"),
        "{}",
        plain.stdout
    );
    for mode in ["", "refuse-profiling", "zero-durations", "profiling-fails"] {
        let env = [("OCL_ICD_VENDORS", vendors), ("TESTICD_MODE", mode)];
        let r = run(&prog, Load::Layer, &env);
        assert_eq!(
            (r.code, &r.stdout),
            (plain.code, &plain.stdout),
            "{mode}: {}",
            r.stderr
        );
        let ev = events(&r.traces[0]);
        let pid = host_pid(&ev);
        let device: Vec<&Value> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] != pid)
            .collect();
        let end = &ev.last().unwrap()["args"]["devices"];
        let test_dev = end
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == "clxfer test GPU")
            .unwrap_or_else(|| panic!("{mode}: {end}"));
        let queue_names: Vec<&str> = ev
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] != pid)
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        match mode {
            "" => {
                assert_eq!(device.len(), 16, "{mode}");
                assert!(
                    device
                        .iter()
                        .all(|d| d["args"].get("device_time").is_none())
                );
                assert!(
                    device.iter().all(|d| d["dur"].as_f64() == Some(1.0)),
                    "1 µs each"
                );
                assert!(
                    queue_names.iter().any(|n| n.contains("profiling forced")),
                    "{queue_names:?}"
                );
            }
            "refuse-profiling" => {
                assert!(
                    device.is_empty(),
                    "{mode}: no device slices on an untimed queue"
                );
                assert_eq!(test_dev["untimed_commands"], 16, "{test_dev}");
                assert!(
                    queue_names.iter().any(|n| n.ends_with("untimed")),
                    "{queue_names:?}"
                );
            }
            _ => {
                assert_eq!(device.len(), 16, "{mode}");
                assert!(
                    device
                        .iter()
                        .all(|d| d["args"]["device_time"] == "unavailable"),
                    "{mode}"
                );
                assert_eq!(test_dev["device_time_unavailable"], 16, "{test_dev}");
            }
        }
        // The host side is whole either way: the copies are classified on the host track.
        let copies = ev
            .iter()
            .filter(|e| {
                e["ph"] == "X" && e["pid"] == pid && e["args"]["api"] == "clEnqueueMemcpyINTEL"
            })
            .count();
        assert_eq!(copies, 16, "{mode}");
    }
}

/// A writer that stalls (a stalled disk): the program runs on at the price of bounded waits,
/// memory stays bounded, and what could not be written is dropped, counted in the trace and said
/// once.
#[test]
fn a_stalled_writer_holds_the_threads_and_drops_only_when_it_makes_no_progress_for_long() {
    // Issue #55: a writer stalled for a second (a starved CPU, a slow disk) holds the program's
    // threads once its memory is full, and nothing is dropped; the wait is in clxfer's own cost.
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.arg("40000")
        .env("CLXFER_TEST_WRITER_STALL_MS", "1000")
        .env("CLXFER_BUFFER_MIB", "1");
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let end = &ev.last().unwrap()["args"];
    let dropped = dropped_in(end);
    assert_eq!(dropped, 0, "{end}");
    assert!(!r.stderr.contains("fell behind"), "{}", r.stderr);
    assert!(end["writer_waits"].as_u64().unwrap() > 0, "{end}");
    assert!(end["writer_waited_ns"].as_u64().unwrap() > 0, "{end}");
    let pid = host_pid(&ev);
    let slices = ev
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == pid)
        .count() as u64;
    assert_eq!(slices, calls_seen(&r));
    let own = end["report"]["overhead"]["writer_waits"].as_u64();
    assert_eq!(
        own,
        end["writer_waits"].as_u64(),
        "the report's own cost says it"
    );

    // A writer that makes no progress for CLXFER_WRITER_WAIT_MS (a dead disk): records are
    // dropped and counted, and memory stays bounded.
    let storm_with = |stall: &str, mib: &str| {
        let mut cmd = command(program("storm"), Load::Layer);
        cmd.arg("40000")
            .env("CLXFER_TEST_WRITER_STALL_MS", stall)
            .env("CLXFER_WRITER_WAIT_MS", "200")
            .env("CLXFER_BUFFER_MIB", mib);
        run_cmd(cmd, Duration::from_secs(120))
    };
    let storm = |stall: &str| storm_with(stall, "16");
    // Peak RSS of the program's own address space (VmHWM), KiB.
    let rss = |r: &Run| -> u64 {
        r.stdout
            .lines()
            .find_map(|l| l.strip_prefix("max_rss_kib "))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    let plain = storm("0");
    let r = storm("1500");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let end = &ev.last().unwrap()["args"];
    let dropped = dropped_in(end);
    assert!(
        dropped > 0,
        "a 1.5 s stall past a 200 ms wait must drop: {end}"
    );
    let warned = r.one_line("fell behind");
    assert!(
        warned.contains(&format!("{dropped} records were dropped")),
        "{warned}"
    );
    // Every call is either a slice in the file or counted as dropped.
    let pid = host_pid(&ev);
    let slices = ev
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == pid)
        .count() as u64;
    assert_eq!(
        slices + end["dropped"]["calls"].as_u64().unwrap(),
        calls_seen(&r)
    );
    let growth = rss(&r).saturating_sub(rss(&plain)) / 1024;
    assert!(
        growth < 64,
        "peak RSS grew {growth} MiB while the writer stalled ({} KiB, {} KiB without)",
        rss(&r),
        rss(&plain)
    );
    // CLXFER_BUFFER_MIB sets the bound: 2 MiB of waiting records against 64.
    let (small, large) = (storm_with("1500", "2"), storm_with("1500", "64"));
    for r in [&small, &large] {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.traces.len(), 1);
    }
    assert!(
        rss(&small) + 8 * 1024 < rss(&large),
        "2 MiB: {} KiB, 64 MiB: {} KiB",
        rss(&small),
        rss(&large)
    );
    assert!(
        rss(&small) < rss(&plain) + 16 * 1024,
        "2 MiB: {} KiB, unstalled: {} KiB",
        rss(&small),
        rss(&plain)
    );
}

/// Issue #24: times a vendor's driver does not really measure (NVIDIA's migrations, which report
/// 0 or an earlier command's times) are not used as if it did: under NVIDIA's rules each
/// migration's device slice is marked untrusted and sits, 0 long, where its completion was seen,
/// after its enqueue call, on no other command; the report counts it without device time.
#[test]
fn untrusted_migration_times_are_marked_and_never_drawn_over_another_command() {
    let r = run(program("demo"), Load::Layer, &[("CLXFER_RULES", "nvidia")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    untrusted_migrations_stand_alone(&ev);
    // Every other command keeps its measured time.
    assert!(ev.iter().any(|e| e["ph"] == "X"
        && e["pid"].as_u64() >= Some(1 << 31)
        && e["args"]["device_time"].is_null()
        && e["dur"].as_f64() > Some(0.0)));
    let report = &ev.last().unwrap()["args"]["report"];
    for row in report["devices"][0]["operations"].as_array().unwrap() {
        if row["kind"] == "Migrate" {
            assert_eq!(row["device_ns"], 0, "{row}");
        }
    }
}

/// Issue #24: a kernel's host slice names the memory objects bound to it at the launch, with
/// their sizes and access: as its races are judged, from the kernel's source (issue #56: one
/// label everywhere); a migration names each object with its size; a map, the region it asked
/// for.
#[test]
fn kernels_and_migrations_name_their_objects_with_sizes_and_access() {
    let r = run(program("kernels"), Load::Layer, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let launch = ev
        .iter()
        .find(|e| e["args"]["api"] == "clEnqueueNDRangeKernel")
        .unwrap();
    let m = &launch["args"]["mem_objects"][0];
    assert_eq!(
        (&m["kind"], &m["size"], &m["access"]),
        (
            &Value::from("buffer"),
            &Value::from(65536),
            &Value::from("writes")
        ),
        "{launch}"
    );
    let r = run(program("demo"), Load::Layer, &[]);
    let ev = events(&r.traces[0]);
    let migrate = ev
        .iter()
        .find(|e| e["args"]["api"] == "clEnqueueMigrateMemObjects")
        .unwrap();
    let m = &migrate["args"]["mem_objects"][0];
    assert!(
        m["size"].as_u64() > Some(0) && m.get("access").is_none(),
        "{migrate}"
    );
    // A map says the region it asked for beside the bytes it moved.
    for map in ev
        .iter()
        .filter(|e| e["args"]["api"] == "clEnqueueMapBuffer")
    {
        let region = &map["args"]["region"];
        assert!(
            region["offset"].is_u64() && region["size"].as_u64() > Some(0),
            "{map}"
        );
        assert!(
            map["args"]["bytes"].as_u64() <= region["size"].as_u64(),
            "{map}"
        );
    }
}

/// CLXFER_TRACE_LIMIT_MIB: the file stops at the limit (plus its last event), stays a trace
/// Perfetto's rules accept, counts what it left out, and keeps the whole run's report; `clxfer
/// report` on it says that it covers only what the file holds.
#[test]
fn a_size_limit_stops_the_trace_and_keeps_the_report_whole() {
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.arg("60000").env("CLXFER_TRACE_LIMIT_MIB", "1");
    let r = run_cmd(cmd, Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.one_line("reached CLXFER_TRACE_LIMIT_MIB (1 MiB)");
    let traces = checked_traces(&trace_dir_of(&r));
    let trace = &traces[0];
    let raw = std::fs::read_to_string(trace).unwrap();
    let last = raw
        .trim_end()
        .trim_end_matches(']')
        .trim_end()
        .lines()
        .last()
        .unwrap();
    let before_last = raw.len() - last.len();
    assert!(
        before_last <= 1 << 20,
        "{before_last} bytes before the last event"
    );
    assert!(
        before_last > (1 << 20) - (1 << 18),
        "{before_last}: stopped too early"
    );
    let ev = events(trace);
    let end = &ev.last().unwrap()["args"];
    let left_out = end["limit_left_out"].as_u64().unwrap();
    assert!(left_out > 0, "{end}");
    assert_eq!(end["events"].as_u64().unwrap() as usize, ev.len());
    // The report written at exit counts every enqueue; the file holds fewer.
    let enqueues = transfers_reported(&end["report"]);
    assert!(enqueues >= 60000, "{}", end["report"]);
    let pid = host_pid(&ev);
    let in_file = (ev.iter())
        .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["args"].get("path").is_some())
        .count() as u64;
    assert!(in_file < enqueues / 2, "{in_file}");
    let mut rep = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    rep.arg("report").arg(trace);
    let rep = run_cmd(rep, Duration::from_secs(60));
    assert_eq!(rep.code, Some(0), "{}", rep.stderr);
    assert!(
        rep.stderr.contains(&format!(
            "left out {left_out} events past CLXFER_TRACE_LIMIT_MIB"
        )),
        "{}",
        rep.stderr
    );
}

/// CLXFER_TRACE_LIMIT_KEEP=last: the file stays under the limit and keeps the run's start and its
/// newest part, in both formats. What it keeps stands alone: every host slice's class is defined
/// in the file, every device slice says its path (from its own args or its host slice's), every
/// arrow has both ends and Perfetto's rules hold; what it dropped is counted, and the report
/// written at exit stays whole.
#[test]
fn a_size_limit_that_keeps_the_last_part_keeps_the_newest_events_standing_alone() {
    for format in ["json", "perfetto"] {
        let mut cmd = command(program("storm"), Load::Layer);
        cmd.args(["20000", "4"])
            .env("CLXFER_TRACE_LIMIT_MIB", "2")
            .env("CLXFER_TRACE_LIMIT_KEEP", "last")
            .env("CLXFER_FORMAT", format)
            // Room for every record while the (debug) writer rewrites the ring on a machine the
            // other tests load: a full buffer drops records (counted, and the report then counts
            // fewer enqueues), which is another test's subject.
            .env("CLXFER_BUFFER_MIB", "256");
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        r.one_line("its oldest events are dropped as new ones come");
        let traces = checked_traces(&trace_dir_of(&r));
        let trace = &traces[0];
        let size = std::fs::metadata(trace).unwrap().len();
        // The limit, and the last event with its report.
        assert!(size <= (2 << 20) + (64 << 10), "{format}: {size} bytes");
        let ev = events(trace);
        let end = &ev.last().unwrap()["args"];
        let left_out = end["limit_left_out"].as_u64().unwrap();
        assert!(left_out > 0, "{end}");
        assert_eq!(end["events"].as_u64().unwrap() as usize, ev.len());
        assert_eq!(
            ev.iter()
                .filter(|e| e["name"] == "clxfer trace start")
                .count(),
            1
        );
        let pid = host_pid(&ev);
        let host: Vec<&Value> = (ev.iter())
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["args"].get("class").is_some())
            .collect();
        // Classes read back whole: no slice names a class its file does not define.
        assert!(
            host.iter().all(|e| e["args"].get("api").is_some()),
            "{format}"
        );
        // The newest part: the last enqueues of the run are in the file, the first are not.
        let commands: Vec<u64> = (host.iter())
            .map(|e| e["args"]["command"].as_u64().unwrap())
            .collect();
        let (first, last) = (
            commands.iter().min().unwrap(),
            commands.iter().max().unwrap(),
        );
        assert!(
            *first > 20_000 && *last > 79_000,
            "{format}: {first}..{last}"
        );
        let device: Vec<&Value> = (ev.iter())
            .filter(|e| e["ph"] == "X" && e["pid"].as_u64().unwrap() > u64::from(u32::MAX >> 1))
            .filter(|e| e["cat"] == "enqueue")
            .collect();
        assert!(!device.is_empty(), "{format}");
        assert!(
            device.iter().all(|e| e["args"].get("path").is_some()),
            "{format}"
        );
        // The whole run's report counts every enqueue.
        assert!(
            transfers_reported(&end["report"]) >= 80_000,
            "{}",
            end["report"]
        );
    }
}

/// The transfers a report counts on its first device, every row's calls.
fn transfers_reported(report: &Value) -> u64 {
    (report["devices"][0]["transfers"].as_array().unwrap().iter())
        .map(|t| t["calls"].as_u64().unwrap())
        .sum()
}

fn trace_dir_of(r: &Run) -> std::path::PathBuf {
    r.traces[0].parent().unwrap().to_path_buf()
}

/// The host bytes staged transfers reached, each once: the trace's end says them per device, the
/// union of its staged pageable host slices' ranges; and the staged finding's fix sizes the
/// region by them, not by the bytes moved (the demo writes one 16 MiB block again and again).
#[test]
fn the_staged_region_is_the_bytes_reached_not_the_bytes_moved() {
    let r = run(program("demo"), Load::Layer, &[("CLXFER_RULES", "nvidia")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let ev = events(&r.traces[0]);
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut moved = 0;
    for e in ev
        .iter()
        .filter(|e| e["cat"] == "enqueue" && e["ph"] == "X")
    {
        let a = &e["args"];
        if a["path"] != "staged" || a["host_memory"] != "pageable" {
            continue;
        }
        let ptr = a["host_ptr"].as_str().unwrap().trim_start_matches("0x");
        let ptr = u64::from_str_radix(ptr, 16).unwrap();
        let bytes = a["bytes"].as_u64().unwrap();
        let span = a["host_span"].as_u64().unwrap_or(bytes);
        ranges.push((ptr, ptr + span));
        moved += bytes;
    }
    ranges.sort();
    let mut union = 0;
    let mut to = 0;
    for (from, end) in ranges {
        union += end.saturating_sub(from.max(to));
        to = to.max(end);
    }
    let end = ev.last().unwrap();
    assert_eq!(end["name"], schema::TRACE_END);
    let reached = end["args"]["devices"][0][schema::STAGED_REGION.name]
        .as_u64()
        .unwrap();
    assert_eq!(reached, union, "{}", end["args"]["devices"][0]);
    assert!(reached > 0 && reached * 2 < moved, "{reached} of {moved}");
    // The report of the trace: the fix's region and its device memory are what was reached.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_clxfer"));
    cmd.args(["report", "--format", "json"]).arg(&r.traces[0]);
    let out = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let fix = (report["findings"].as_array().unwrap().iter())
        .find(|f| f["kind"] == "staged-pageable")
        .map(|f| f["fix"].as_str().unwrap().to_string())
        .unwrap();
    let size = clxfer::units::bytes(reached);
    assert!(
        fix.contains(&format!("({size} of it reached by these transfers)"))
            && fix.contains(&format!("at least {size} (nvidia.use-host-ptr)")),
        "{fix}"
    );
}
