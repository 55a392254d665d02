//! Issue #22: clxfer is a perfect guest. Each test runs a program of tests/programs/guest.c
//! without clxfer, then as a loader layer, by LD_PRELOAD and both, in trace and in summary mode,
//! and asserts what the program observed is identical (docs/RELIABILITY.md lists each guarantee).

mod common;
use common::*;

/// Runs `guest ARGS` everywhere; every run under clxfer must print what the run without it
/// printed and exit as it did. Returns the runs under clxfer, trace mode's three first.
fn same_as_without(args: &[&str], env: &[(&str, &str)]) -> Vec<Run> {
    let mode = args.join(" ");
    let prog = program("guest");
    let plain = {
        let mut cmd = command(&prog, Load::None);
        cmd.args(args).envs(env.iter().copied());
        run_cmd(cmd, std::time::Duration::from_secs(180))
    };
    assert_eq!(
        plain.code,
        Some(0),
        "{mode} without clxfer:\n{}{}",
        plain.stdout,
        plain.stderr
    );
    assert!(plain.stdout.contains("checksum"), "{}", plain.stdout);
    let mut runs = Vec::new();
    for clxfer_mode in ["trace", "summary"] {
        for load in [Load::Layer, Load::Preload, Load::Both] {
            let mut cmd = command(&prog, load);
            cmd.args(args)
                .env("CLXFER_MODE", clxfer_mode)
                .envs(env.iter().copied());
            let r = run_cmd(cmd, std::time::Duration::from_secs(180));
            let what = format!("{mode} {load:?} {clxfer_mode}");
            assert_eq!(r.code, plain.code, "{what}: exit code\n{}", r.stderr);
            assert_eq!(
                r.stdout, plain.stdout,
                "{what}: the program saw something else"
            );
            assert!(
                !r.stderr.contains("panicked") && !r.stderr.contains("internal error"),
                "{what}: {}",
                r.stderr
            );
            runs.push(r);
        }
    }
    runs
}

#[test]
fn queue_properties_and_profiling_info_are_the_programs_own() {
    let runs = same_as_without(&["queries"], &[]);
    assert!(runs[..3].iter().all(|r| r.traces.len() == 1));
    // The comparison means something: clxfer did turn profiling on (the queues are timed) and
    // the program's answers are the spec's for queues without it.
    let out = &runs[0].stdout;
    for expected in [
        "null       CL_QUEUE_PROPERTIES 0 0x0 size 8",
        "null       CL_QUEUE_PROPERTIES_ARRAY size 0 0",
        "empty      CL_QUEUE_PROPERTIES_ARRAY size 0 8",
        "zero       CL_QUEUE_PROPERTIES_ARRAY 0 size 24: 1093 0 0 abababababababab",
        "ooo        CL_QUEUE_PROPERTIES 0 0x1 size 8",
        "null       profiling 0x1282 -7 untouched size 12345",
        "profiling  profiling 0x1282 0 a time size 8",
        "1.x-prof   CL_QUEUE_PROPERTIES 0 0x2 size 8",
        "clEnqueueMarker(q, NULL) -30",
        "clEnqueueMarker(q, &event) 0",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    let trace = std::fs::read_to_string(&runs[0].traces[0]).unwrap();
    assert!(
        trace.contains("profiling forced"),
        "clxfer timed the program's queues"
    );
    assert!(
        trace.contains("\"Write H2D"),
        "the writes have device slices"
    );
}

#[test]
fn a_property_list_is_read_no_further_than_the_driver_reads_it() {
    let runs = same_as_without(&["badlist"], &[]);
    assert!(
        runs[0]
            .stdout
            .contains("unknown name, no terminator, at a page end: -30 null"),
        "{}",
        runs[0].stdout
    );
}

#[test]
fn a_handle_the_driver_never_made_is_not_read_through() {
    let vendors = vendors_dir(true);
    let runs = same_as_without(
        &["testicd"],
        &[("OCL_ICD_VENDORS", vendors.to_str().unwrap())],
    );
    let out = &runs[0].stdout;
    for expected in [
        "clCreateFromGLBuffer, no errcode_ret: 0xffffffffffffffff",
        "clSetCommandQueueProperty 0 old 0x0",
        "clSetCommandQueueProperty 0 old 0x1",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
}

#[test]
fn forked_children_never_hang_and_trace_only_their_own_calls() {
    let runs = same_as_without(&["fork", "1000"], &[]);
    assert!(
        runs[0].stdout.contains("forks 1000, hung 0, failed 0"),
        "{}",
        runs[0].stdout
    );
    for r in &runs[..3] {
        // The parent's trace and one for each child that made OpenCL calls (every 100th).
        assert_eq!(r.traces.len(), 11, "{}", r.stderr);
        let mut children = 0;
        for t in &r.traces {
            let text = std::fs::read_to_string(t).unwrap();
            if text.contains("clEnqueueWriteBuffer") {
                continue;
            }
            children += 1;
            assert_eq!(
                text.matches("\"name\":\"clGetDeviceInfo\"").count(),
                3,
                "{}",
                t.display()
            );
            assert_eq!(
                text.matches("\"name\":\"clCreateBuffer\"").count(),
                1,
                "{}",
                t.display()
            );
        }
        assert_eq!(children, 10);
    }
}

#[test]
fn calls_from_exit_handlers_and_destructors_are_traced() {
    let runs = same_as_without(&["atexit"], &[]);
    assert!(
        runs[0].stdout.contains("exit handler: 13 calls")
            && runs[0].stdout.contains("destructor: 2 calls"),
        "{}",
        runs[0].stdout
    );
    for r in &runs {
        // main's 6, the exit handler's 13 and the destructor's 2, seen and counted.
        let counts = r.counts();
        assert_eq!(counts.values().sum::<u64>(), 21, "{}", r.stderr);
        assert_eq!(counts["clEnqueueWriteBuffer"], 8);
        assert_eq!(counts["clGetPlatformIDs"], 3);
        assert_eq!(counts["clReleaseContext"], 1);
    }
    for r in &runs[..3] {
        let text = std::fs::read_to_string(&r.traces[0]).unwrap();
        // Each of the handler's writes has its host slice and its device slice.
        assert_eq!(text.matches("\"name\":\"clEnqueueWriteBuffer ").count(), 8);
        assert_eq!(text.matches("\"name\":\"Write ").count(), 8);
        assert_eq!(text.matches("\"name\":\"clReleaseContext\"").count(), 1);
    }
    // Summary mode reports the handler's transfers.
    assert!(
        runs[3].stderr.contains("H2D  host-copy        8"),
        "{}",
        runs[3].stderr
    );
}

#[test]
fn a_command_that_never_completes_does_not_keep_later_ones_alive() {
    // The writer's records waiting to be written are bounded on their own (by this variable;
    // `trace::a_stalled_writer_drops_and_counts_records_and_memory_stays_bounded`): at 1 MiB,
    // what is measured is what the collector, the graph and the trace keep per command.
    let runs = same_as_without(&["stuck", "50000"], &[("CLXFER_BUFFER_MIB", "1")]);
    assert!(
        runs[0].stdout.contains(
            "stuck: 50000 commands behind a stuck marker, resident memory grew under 8 MiB: yes"
        ),
        "{}",
        runs[0].stdout
    );
    // The figures, for docs/RELIABILITY.md (`cargo test -- --nocapture`).
    for r in &runs {
        for line in r
            .stderr
            .lines()
            .filter(|l| l.contains("resident memory grew"))
        {
            eprintln!("{line}");
        }
    }
}

#[test]
fn a_driver_that_runs_callbacks_under_its_own_lock_cannot_deadlock_clxfer() {
    // The test ICD's completion thread holds its lock while it runs clxfer's callback, and
    // clxfer's status and profiling queries take that lock: clxfer must never query the driver
    // while holding the lock its callback takes (the build before hung within a second).
    let vendors = vendors_dir(true);
    let env = [
        ("OCL_ICD_VENDORS", vendors.to_str().unwrap()),
        ("TESTICD_MODE", "locked-callbacks"),
        // Every marker timed: as many callbacks as there can be.
        ("CLXFER_DEVICE_TIMING", "all"),
    ];
    let runs = same_as_without(&["locked", "20000"], &env);
    assert!(
        runs[0].stdout.contains("locked: 20000 markers"),
        "{}",
        runs[0].stdout
    );
    for r in &runs[..3] {
        let text = std::fs::read_to_string(&r.traces[0]).unwrap();
        // Every marker timed: its device slice, none left incomplete.
        assert_eq!(
            text.matches("\"name\":\"MarkerWithWaitList\"").count(),
            20000
        );
        assert!(text.contains("\"incomplete_at_exit\":0"));
    }
}

#[test]
fn reference_counts_leave_out_what_clxfer_holds() {
    // On the test ICD, whose counts are exact and whose callbacks come later on its own thread
    // (PoCL's counts vary from run to run without clxfer: 3 of 60 in one measurement).
    let vendors = vendors_dir(true);
    let env = [
        ("OCL_ICD_VENDORS", vendors.to_str().unwrap()),
        ("TESTICD_MODE", "locked-callbacks"),
        // Every marker timed: as many callbacks as there can be.
        ("CLXFER_DEVICE_TIMING", "all"),
    ];
    let runs = same_as_without(&["refcounts"], &env);
    let out = &runs[0].stdout;
    for expected in [
        "after clFinish                   event 1 queue 2",
        "after a retain                   event 2 queue 2",
        "after its release                queue 1",
    ] {
        assert_eq!(out.matches(expected).count(), 3, "{expected:?} in\n{out}");
    }
}
