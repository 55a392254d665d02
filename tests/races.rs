//! Possible data races between queues and devices (issue #25), on two PoCL devices: each variant
//! of tests/programs/races.c, as a loader layer and by preload, in summary and trace mode. A race
//! is said on stderr with both commands; a correct variant gets none; and the program reads back
//! what it reads back without clxfer.

mod common;

use common::*;

const TWO: [(&str, &str); 1] = [("POCL_DEVICES", "pthread pthread")];

/// The race lines on stderr, without the threads they name (a different number each run).
fn races(r: &Run) -> Vec<String> {
    r.clxfer_lines()
        .into_iter()
        .filter(|l| l.contains("possible data race"))
        .map(unthreaded)
        .collect()
}

fn unthreaded(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(", thread ") {
        out.push_str(&rest[..at]);
        rest = rest[at + ", thread ".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out + rest
}

#[test]
fn unordered_conflicting_commands_are_said_and_ordered_ones_are_not() {
    let prog = program("races");
    // (mode, the race's two commands as their lines name them; none: no race)
    let cases: &[(&str, Option<[&str; 2]>)] = &[
        ("correct", None),
        (
            "race",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #1) writes bytes 0..65536",
                "command #2 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("finish", None),
        // The host waited for a flag the write's completion callback set (issue #56).
        ("callback", None),
        ("halves", None),
        ("subs", None),
        (
            "sub-parent",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #1) writes bytes 0..32768",
                "command #2 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("user", None),
        (
            "ooo",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #3) writes bytes 0..65536",
                "command #2 (clEnqueueWriteBuffer on device #1 queue #3) writes bytes 0..65536",
            ]),
        ),
        ("ooo-event", None),
        ("marker", None),
        (
            "marker-empty",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #1) writes bytes 0..65536",
                "command #3 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("barrier", None),
        (
            "kernel",
            Some([
                "command #2 (clEnqueueNDRangeKernel on device #1 queue #1) writes the whole object",
                "command #3 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("kernel-event", None),
        ("kernel-const", None),
        // Without argument info the source still shows the write.
        (
            "kernel-noinfo",
            Some([
                "command #2 (clEnqueueNDRangeKernel on device #1 queue #1) writes the whole object",
                "command #3 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        // The source says only that the kernel may write (it hands the pointer to a function
        // of its own): a race that rests on it is the report's (`declared`), never said on
        // stderr as certain (issue #56).
        ("kernel-helper", None),
        // From a binary: nothing tells, and an assumed race is not said.
        ("kernel-binary", None),
    ];
    for &(mode, want) in cases {
        let plain = {
            let mut cmd = command(&prog, Load::None);
            cmd.arg(mode).envs(TWO);
            run_cmd(cmd, std::time::Duration::from_secs(120))
        };
        assert_eq!(
            plain.code,
            Some(0),
            "{mode}: {}{}",
            plain.stdout,
            plain.stderr
        );
        for clxfer_mode in ["summary", "trace"] {
            for load in [Load::Layer, Load::Preload] {
                let mut cmd = command(&prog, load);
                cmd.arg(mode).envs(TWO).env("CLXFER_MODE", clxfer_mode);
                let r = run_cmd(cmd, std::time::Duration::from_secs(120));
                let what = format!("{mode} {clxfer_mode} {load:?}");
                assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
                assert_eq!(
                    r.stdout, plain.stdout,
                    "{what}: the program read something else"
                );
                let said = races(&r);
                if mode == "kernel-helper" && clxfer_mode == "summary" {
                    let flat = r.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
                    assert!(
                        flat.contains("may write (its kernel argument is not `const`)"),
                        "{what}: the report does not list the declared race: {}",
                        r.stderr
                    );
                }
                match want {
                    None => assert!(said.is_empty(), "{what}: {said:?}"),
                    Some([first, second]) => {
                        assert_eq!(said.len(), 1, "{what}: {}", r.stderr);
                        assert!(
                            said[0].contains(first) && said[0].contains(second),
                            "{what}: {}",
                            said[0]
                        );
                    }
                }
            }
        }
    }
}

/// A correct program gets no race warning: the project's other test programs, each with what it
/// synchronises (wait lists, clFinish, blocking calls, several threads and queues), on two
/// devices.
#[test]
fn the_other_test_programs_get_no_race_warning() {
    let programs: &[(&str, &[&str])] = &[
        ("demo", &[]),
        ("transfers", &[]),
        ("kernels", &[]),
        ("overlap", &["overlap"]),
        ("overlap", &["serial"]),
        ("graph", &["two"]),
        ("threads", &[]),
        ("in_flight", &[]),
        ("buffers", &[]),
        ("svm_events", &[]),
    ];
    for &(name, args) in programs {
        for (load, mode) in [(Load::Preload, "summary"), (Load::Layer, "trace")] {
            let mut cmd = command(program(name), load);
            cmd.args(args).envs(TWO).env("CLXFER_MODE", mode);
            let r = run_cmd(cmd, std::time::Duration::from_secs(180));
            let what = format!("{name} {args:?} {load:?} {mode}");
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            assert!(races(&r).is_empty(), "{what}: {:?}", races(&r));
        }
    }
}

/// A race is the report's first finding, with its confidence, in summary mode (on stderr) and
/// in a trace's live report; the trace holds it as an instant with an arrow between the two
/// enqueue slices, which `clxfer check` accepts, and `clxfer report` of the trace gives the same
/// report.
#[test]
fn a_race_is_the_first_finding_and_an_instant_with_an_arrow_in_the_trace() {
    use serde_json::Value;
    let prog = program("races");
    for (mode, confidence, commands) in [
        ("race", "known", [1, 2]),
        // The kernel's source shows it writes the buffer, with or without argument info.
        ("kernel", "known", [2, 3]),
        ("kernel-noinfo", "known", [2, 3]),
        // It hands the pointer to a function of its own: only declared writable.
        ("kernel-helper", "declared", [2, 3]),
    ] {
        // Summary mode: the report on stderr puts it first.
        let mut cmd = command(&prog, Load::Preload);
        cmd.arg(mode).envs(TWO).env("CLXFER_MODE", "summary");
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let text = r.stderr.split_once("findings, ").map(|t| t.1).unwrap_or("");
        assert!(
            text.starts_with("what the program does wrong first, then ranked by the time they would save:\n 1. possible data race on memory object 0x"),
            "{mode}: {}",
            r.stderr
        );
        assert!(
            text.contains(&format!("confidence: {confidence}")),
            "{text}"
        );
        // Trace mode, the live report beside it.
        let dir = fresh_dir("races-trace");
        let live = fresh_dir("races-live").join("live.json");
        let mut cmd = command(&prog, Load::Layer);
        cmd.arg(mode)
            .envs(TWO)
            .env("CLXFER_DIR", &dir)
            .env("CLXFER_REPORT", &live);
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let traces = checked_traces(&dir);
        assert_eq!(traces.len(), 1, "{}", r.stderr);
        let live: Value = serde_json::from_slice(&std::fs::read(&live).unwrap()).unwrap();
        let first = &live["findings"][0];
        assert_eq!(first["kind"], "possible-race", "{mode}: {first}");
        assert_eq!(first["confidence"], confidence, "{first}");
        let evidence = first["evidence"].to_string();
        for c in commands {
            assert!(evidence.contains(&format!("command #{c} (")), "{evidence}");
        }
        let mut rep = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
        rep.args(["report", "--format", "json"]).arg(&traces[0]);
        let rep = run_cmd(rep, std::time::Duration::from_secs(60));
        assert_eq!(rep.code, Some(0), "{}", rep.stderr);
        let from_trace: Value = serde_json::from_str(&rep.stdout).unwrap();
        assert_eq!(live, from_trace, "{mode}: the reports differ");
        // The instant names both commands; the arrow joins their enqueue slices.
        let events: Vec<Value> = clxfer::trace::read::read_file(&traces[0]).unwrap().events;
        let instants: Vec<&Value> = events
            .iter()
            .filter(|e| e["name"] == "possible data race")
            .collect();
        assert_eq!(instants.len(), 1, "{mode}");
        let args = &instants[0]["args"];
        assert_eq!(args["first"]["command"], commands[0], "{args}");
        assert_eq!(args["second"]["command"], commands[1], "{args}");
        assert_eq!(args["confidence"], confidence);
        let slice_of = |c: u64| {
            events
                .iter()
                .find(|e| {
                    e["ph"] == "X" && e["args"]["command"] == c && e["args"]["api"].is_string()
                })
                .unwrap_or_else(|| panic!("no enqueue slice of command #{c}"))
        };
        let flow = |ph: &str| {
            events
                .iter()
                .find(|e| e["name"] == "race" && e["ph"] == ph)
                .unwrap_or_else(|| panic!("{mode}: no race flow {ph}"))
        };
        for (ph, c) in [("s", commands[0]), ("f", commands[1])] {
            let (end, slice) = (flow(ph), slice_of(c));
            assert_eq!(
                (&end["ts"], &end["tid"], &end["cat"]),
                (&slice["ts"], &slice["tid"], &slice["cat"]),
                "{mode}: the arrow's {ph} is not at command #{c}'s enqueue"
            );
        }
        assert_eq!(instants[0]["ts"], slice_of(commands[1])["ts"]);
    }
}

/// Question 3 of the brief: the two-device hand-off (tests/programs/handoff.c) under NVIDIA's
/// rules. The correct program gets no race and none of the hand-off findings; each buggy variant
/// gets its own, with the commands classified as they move; the live report and the report of
/// the trace agree; and the program reads back what it reads back without clxfer.
/// The hand-off with both queues on one device (`HANDOFF_ONE_DEVICE`, the one-GPU runs of issue
/// #30): under NVIDIA's rules every flags-0 migration moves nothing (`none`), a `HOST` one goes to
/// the host (D2H); the race is reported in the racing mode and in no other; the program reads what
/// it reads without clxfer.
#[test]
fn the_hand_off_on_one_device() {
    use serde_json::Value;
    let prog = program("handoff");
    // (mode, races, the migrations' (direction, path, calls))
    let cases: &[(&str, bool, (&str, &str, u64))] = &[
        ("correct", false, ("H2D", "none", 2)),
        ("race", true, ("H2D", "none", 1)),
        ("host", false, ("D2H", "pinned", 2)),
        ("source", false, ("H2D", "none", 2)),
    ];
    for &(mode, racy, (direction, path, calls)) in cases {
        let plain = {
            let mut cmd = command(&prog, Load::None);
            cmd.arg(mode).env("HANDOFF_ONE_DEVICE", "1");
            run_cmd(cmd, std::time::Duration::from_secs(120))
        };
        assert_eq!(plain.code, Some(0), "{mode}: {}", plain.stderr);
        let live = fresh_dir("handoff-one").join("live.json");
        let mut cmd = command(&prog, Load::Layer);
        cmd.arg(mode)
            .env("HANDOFF_ONE_DEVICE", "1")
            .env("CLXFER_RULES", "nvidia")
            .env("CLXFER_MODE", "summary")
            .env("CLXFER_REPORT", &live);
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{mode}: {}", r.stderr);
        assert_eq!(
            r.stdout, plain.stdout,
            "{mode}: the program read something else"
        );
        assert_eq!(!races(&r).is_empty(), racy, "{mode}: {:?}", races(&r));
        let live: Value = serde_json::from_slice(&std::fs::read(&live).unwrap()).unwrap();
        let migrations: Vec<(String, String, u64)> =
            (live["devices"][0]["operations"].as_array().unwrap().iter())
                .filter(|o| o["kind"] == "Migrate")
                .map(|o| {
                    let s = |k: &str| o[k].as_str().unwrap().to_string();
                    (s("direction"), s("path"), o["calls"].as_u64().unwrap())
                })
                .collect();
        let want = (direction.to_string(), path.to_string(), calls);
        assert_eq!(migrations, vec![want], "{mode}");
    }
}

#[test]
fn the_two_device_hand_off_and_its_buggy_variants() {
    use serde_json::Value;
    const HAND_OFF: [&str; 4] = [
        "possible-race",
        "host-hop-migration",
        "migration-on-source-queue",
        "initialised-twice",
    ];
    let prog = program("handoff");
    // The brief's program hands off 64 MiB.
    const MIB: u64 = 64;
    let mut totals = Vec::new();
    // (mode, the finding it must get; the device-2 kernel's (direction, path), and a rule it cites)
    type Case = (
        &'static str,
        Option<&'static str>,
        (&'static str, &'static str),
        &'static str,
    );
    let cases: &[Case] = &[
        ("correct", None, ("D2D", "none"), ""),
        ("race", Some("possible-race"), ("D2D", "none"), ""),
        (
            "host",
            Some("host-hop-migration"),
            ("H2D", "pinned"),
            "any.host-hop",
        ),
        (
            "source",
            Some("migration-on-source-queue"),
            ("D2D", "via-host"),
            "any.idle-migration",
        ),
        ("initboth", Some("initialised-twice"), ("D2D", "none"), ""),
    ];
    for &(mode, finding, (direction, path), rule) in cases {
        let plain = {
            let mut cmd = command(&prog, Load::None);
            cmd.arg(mode).envs(TWO).env("HANDOFF_MIB", MIB.to_string());
            run_cmd(cmd, std::time::Duration::from_secs(120))
        };
        assert_eq!(plain.code, Some(0), "{mode}: {}", plain.stderr);
        let dir = fresh_dir("handoff-trace");
        let live = fresh_dir("handoff-live").join("live.json");
        let mut cmd = command(&prog, Load::Layer);
        cmd.arg(mode)
            .envs(TWO)
            .env("HANDOFF_MIB", MIB.to_string())
            .env("CLXFER_RULES", "nvidia")
            .env("CLXFER_DIR", &dir)
            .env("CLXFER_REPORT", &live);
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{mode}: {}", r.stderr);
        assert_eq!(
            r.stdout, plain.stdout,
            "{mode}: the program read something else"
        );
        let said = races(&r);
        let live: Value = serde_json::from_slice(&std::fs::read(&live).unwrap()).unwrap();
        let kinds: Vec<&str> = live["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap())
            .collect();
        for k in HAND_OFF {
            assert_eq!(
                kinds.contains(&k),
                finding == Some(k),
                "{mode}: finding {k} in {kinds:?}"
            );
        }
        let findings = live["findings"].as_array().unwrap();
        // What the program does wrong is a misuse, first; the correct program has none.
        let misuses: Vec<&str> = (findings.iter())
            .take_while(|f| f["misuse"] == true)
            .map(|f| f["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            misuses.is_empty(),
            finding.is_none(),
            "{mode}: misuses {misuses:?} of {kinds:?}"
        );
        assert!(
            findings
                .iter()
                .skip(misuses.len())
                .all(|f| f["misuse"] == false),
            "{mode}: a misuse after a time finding: {kinds:?}"
        );
        // The projected time of every move, summed over the devices' rows.
        let projected: u64 = (live["devices"].as_array().unwrap().iter())
            .flat_map(|d| d["transfers"].as_array().unwrap().iter())
            .map(|t| t["projected_ns"].as_u64().unwrap_or(0))
            .sum();
        totals.push((mode, projected));
        if mode == "correct" {
            // NVIDIA's driver does not time migrations, and the rules are forced on PoCL: the
            // move is projected by NVIDIA's one model of a move through the host (the two legs
            // of a migration to the host and back), said so.
            let f = (findings.iter())
                .find(|f| f["kind"] == "via-host-migration")
                .unwrap_or_else(|| panic!("no via-host-migration in {kinds:?}"));
            assert!(f["evidence"].to_string().contains("projected ("), "{f}");
            let model = clxfer::model::rules::NVIDIA
                .cost
                .unwrap()
                .via_host_ns(MIB << 20)
                .unwrap() as f64;
            let saved = f["saving_ns"].as_u64().unwrap() as f64;
            assert!(
                saved >= model / 2.0 && saved <= model * 2.0,
                "{saved} against {model}: {f}"
            );
            assert!(
                f["estimate"].as_str().unwrap().starts_with("projected:"),
                "{f}"
            );
            // The fix is the copy through pinned memory that NVIDIA's rules price far lower:
            // the read's and the write's pinned links, and the saving is what is left.
            let c = clxfer::model::rules::NVIDIA.cost.unwrap();
            let n = MIB << 20;
            let copy = (c.pinned[1].unwrap().time_ns(n).unwrap()
                + c.pinned[0].unwrap().time_ns(n).unwrap())
            .round() as u64;
            let fix = f["fix"].as_str().unwrap();
            assert!(
                fix.starts_with("Copy it yourself through pinned memory")
                    && fix.contains(&format!("projected {}", clxfer::units::duration(copy))),
                "{f}"
            );
            assert!(copy * 10 < model as u64, "{copy} against {model}");
        }
        if mode == "race" {
            // The kernel on device 1 writes the buffer (its source says so: the program is
            // built without -cl-kernel-arg-info), device 2's migration reads it unordered.
            assert_eq!(kinds[0], "possible-race");
            assert_eq!(findings[0]["confidence"], "known", "{}", findings[0]);
            // Two pairs on stderr (#2 with the migration #3, and with the kernel #4 behind it
            // on queue 2), one missing dependency: one finding, whose fix covers both.
            assert_eq!(said.len(), 2, "{said:?}");
            let races = kinds.iter().filter(|k| **k == "possible-race").count();
            assert_eq!(races, 1, "{kinds:?}");
            let fix = findings[0]["fix"].as_str().unwrap();
            assert!(fix.contains("orders #4 after it as well"), "{fix}");
            assert!(
                said[0].contains("command #2 (clEnqueueNDRangeKernel on device #1 queue #1) writes")
                    && said[0].contains("command #3 (clEnqueueMigrateMemObjects on device #2 queue #2) reads the whole object"),
                "{said:?}"
            );
        } else {
            assert!(said.is_empty(), "{mode}: {said:?}");
        }
        if mode == "host" {
            // The hop says which form is better, by one model.
            let f = (findings.iter())
                .find(|f| f["kind"] == "host-hop-migration")
                .unwrap();
            assert!(
                (f["evidence"].to_string())
                    .contains("which form is better on nvidia devices: flags 0"),
                "{f}"
            );
        }
        let traces = checked_traces(&dir);
        let mut rep = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
        rep.args(["report", "--format", "json"]).arg(&traces[0]);
        let rep = run_cmd(rep, std::time::Duration::from_secs(60));
        let from_trace: Value = serde_json::from_str(&rep.stdout).unwrap();
        assert_eq!(live, from_trace, "{mode}: the reports differ");
        if let Some(kind) = finding {
            // The text report shows the misuse as a numbered finding, whatever it saves.
            let mut text = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
            text.arg("report").arg(&traces[0]);
            let text = run_cmd(text, std::time::Duration::from_secs(60)).stdout;
            let title = |f: &Value| {
                f["title"]
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let f = findings.iter().find(|f| f["kind"] == kind).unwrap();
            assert!(
                text.contains(&format!(" 1. {}", title(f))),
                "{mode}: {kind} is not the first numbered finding:\n{text}"
            );
        }
        // Device 2's kernel, as classified.
        let events: Vec<Value> = clxfer::trace::read::read_file(&traces[0]).unwrap().events;
        let kernel = events
            .iter()
            .find(|e| {
                e["ph"] == "X"
                    && e["args"]["api"] == "clEnqueueNDRangeKernel"
                    && e["args"]["queue"] == "device #2 queue #2"
            })
            .unwrap_or_else(|| panic!("{mode}: no kernel on device 2"));
        let args = &kernel["args"];
        let class = (
            args["direction"].as_str().unwrap_or("D2D"),
            args["path"].as_str().unwrap_or("none"),
        );
        assert_eq!(class, (direction, path), "{mode}: {args}");
        if !rule.is_empty() {
            assert!(
                args["rule_ids"].to_string().contains(rule),
                "{mode}: {args}"
            );
        }
    }
    // One model of a move between devices: the correct program's moves, projected, never cost
    // more than those of a buggy variant moving the same bytes (the race stops early).
    let total = |m: &str| totals.iter().find(|t| t.0 == m).unwrap().1;
    for buggy in ["host", "source", "initboth"] {
        assert!(
            total("correct") <= total(buggy),
            "correct {} ns against {buggy} {} ns: {totals:?}",
            total("correct"),
            total(buggy)
        );
    }
}

/// Ownership across devices: a buffer device 1 wrote, only read by a kernel on device 2, is still
/// valid on device 1 under rules that keep the copy (NVIDIA's, AMD's), so device 1's own read
/// moves nothing; under rules with one current location (Intel's) it comes back through the host.
#[test]
fn a_buffer_only_read_elsewhere_stays_valid_where_the_vendor_keeps_a_copy() {
    use serde_json::Value;
    let prog = program("handoff");
    for (rules, path) in [
        ("nvidia", "none"),
        ("amd", "none"),
        ("intel-dgpu", "via-host"),
    ] {
        let dir = fresh_dir("reread-trace");
        let mut cmd = command(&prog, Load::Layer);
        cmd.arg("reread")
            .envs(TWO)
            .env("CLXFER_RULES", rules)
            .env("CLXFER_DIR", &dir);
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{rules}: {}", r.stderr);
        assert!(races(&r).is_empty(), "{rules}: two reads race with nothing");
        let traces = checked_traces(&dir);
        let events: Vec<Value> = clxfer::trace::read::read_file(&traces[0]).unwrap().events;
        let kernel = |queue: &str| {
            events
                .iter()
                .find(|e| {
                    e["ph"] == "X"
                        && e["args"]["api"] == "clEnqueueNDRangeKernel"
                        && e["args"]["queue"] == queue
                })
                .map(|e| e["args"].clone())
                .unwrap_or_else(|| panic!("{rules}: no kernel on {queue}"))
        };
        let on2 = kernel("device #2 queue #2");
        assert_eq!(
            on2["path"], "via-host",
            "{rules}: the first read moves it: {on2}"
        );
        let on1 = kernel("device #1 queue #1");
        assert_eq!(
            on1["path"].as_str().unwrap_or("none"),
            path,
            "{rules}: {on1}"
        );
        // The argument is `const`: the trace says it is only read.
        assert_eq!(on1["mem_objects"][0]["access"], "reads", "{on1}");
        // A kernel that moves nothing carries no classification; one that moves cites why.
        if path != "none" {
            let cited = on1["rule_ids"].to_string();
            assert!(
                cited.contains(&format!("{rules}.read-copy")),
                "{rules}: {on1}"
            );
        }
    }
}

/// `CLXFER_RACES=off` skips the check: the racing variant gets no warning and no race finding,
/// and what the program reads back is the same.
#[test]
fn the_race_check_can_be_turned_off() {
    let prog = program("races");
    let mut cmd = command(&prog, Load::Preload);
    cmd.arg("race")
        .envs(TWO)
        .env("CLXFER_MODE", "summary")
        .env("CLXFER_RACES", "off");
    let r = run_cmd(cmd, std::time::Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(races(&r).is_empty(), "{:?}", races(&r));
    assert!(r.stderr.contains("clxfer summary"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("what the program does wrong first"),
        "{}",
        r.stderr
    );
}

/// A race clxfer would have to assume (a kernel argument the driver keeps no qualifiers for) is
/// not said on stderr, but the report says what clxfer could not judge, last, with its
/// confidence; the trace keeps it too, so the report of the trace agrees.
#[test]
fn an_assumed_race_is_not_said_but_the_report_names_it_last() {
    use serde_json::Value;
    let prog = program("races");
    let dir = fresh_dir("assumed-trace");
    let live = fresh_dir("assumed-live").join("live.json");
    let mut cmd = command(&prog, Load::Layer);
    cmd.arg("kernel-binary")
        .envs(TWO)
        .env("CLXFER_DIR", &dir)
        .env("CLXFER_REPORT", &live);
    let r = run_cmd(cmd, std::time::Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(races(&r).is_empty(), "{:?}", races(&r));
    let live: Value = serde_json::from_slice(&std::fs::read(&live).unwrap()).unwrap();
    let findings = live["findings"].as_array().unwrap();
    let last = findings.last().unwrap();
    assert_eq!(last["kind"], "unjudged-race", "{findings:?}");
    assert_eq!(last["confidence"], "assumed");
    assert!(
        findings.iter().all(|f| f["kind"] != "possible-race"),
        "{findings:?}"
    );
    let traces = checked_traces(&dir);
    let mut rep = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    rep.args(["report", "--format", "json"]).arg(&traces[0]);
    let rep = run_cmd(rep, std::time::Duration::from_secs(60));
    let from_trace: Value = serde_json::from_str(&rep.stdout).unwrap();
    assert_eq!(live, from_trace, "the reports differ");
    // The text report keeps the plain heading: no race was said.
    let mut text = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    text.arg("report").arg(&traces[0]);
    let text = run_cmd(text, std::time::Duration::from_secs(60));
    assert!(
        text.stdout
            .contains("findings, ranked by the time they would save:"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("would race if their kernels write arguments")
    );
}

/// A status is not a dependency where the rules say so: the host polls a migration that moves
/// nothing until it reads complete, then another device reads the buffer the migration waited
/// for. By the OpenCL rules (PoCL's `cpu` set) the poll orders them; under NVIDIA's, whose
/// migrations to a device read complete before what they wait for (`nvidia.early-complete`), it
/// does not, and the race is said.
#[test]
fn a_status_that_completes_early_is_no_synchronisation() {
    let prog = program("races");
    for (rules, racy) in [("cpu", false), ("nvidia", true)] {
        let mut cmd = command(&prog, Load::Preload);
        cmd.arg("poll-migration")
            .envs(TWO)
            .env("CLXFER_RULES", rules)
            .env("CLXFER_MODE", "summary");
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{rules}: {}", r.stderr);
        let said = races(&r);
        assert_eq!(!said.is_empty(), racy, "{rules}: {said:?}");
        if racy {
            assert!(
                said[0].contains("command #1 (clEnqueueWriteBuffer on device #1 queue #1")
                    && said[0].contains("command #3 (clEnqueueReadBuffer on device #2 queue #2"),
                "{said:?}"
            );
        }
    }
}
