//! libclxfer.so loads into real OpenCL programs (ocl-icd + PoCL) as a loader layer, by LD_PRELOAD
//! and both at once, forwards every call faithfully, and sees each program call exactly once.

mod common;

use clxfer::layer::Api;
use common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// Runs `name` in every loading mode; asserts identical stdout and exit code, clean stderr, and
/// that the three clxfer modes saw the same calls, each once. Returns the counts.
fn same_everywhere(name: &str, env: &[(&str, &str)]) -> BTreeMap<String, u64> {
    let prog = program(name);
    let plain = run(&prog, Load::None, env);
    assert_eq!(
        plain.code,
        Some(0),
        "{name} failed without clxfer:\n{}{}",
        plain.stdout,
        plain.stderr
    );
    assert!(
        plain.stdout.contains("checksum"),
        "{name}: {}",
        plain.stdout
    );
    let mut seen = None;
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(&prog, load, env);
        assert_eq!(
            r.code, plain.code,
            "{name} {load:?} exit code\n{}",
            r.stderr
        );
        assert_eq!(r.stdout, plain.stdout, "{name} {load:?}: stdout differs");
        assert!(
            !r.stderr.contains("panicked"),
            "{name} {load:?}: {}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("internal error"),
            "{name} {load:?}: {}",
            r.stderr
        );
        let (preload, layer, _ext) = r
            .via()
            .unwrap_or_else(|| panic!("{name} {load:?}: no report\n{}", r.stderr));
        match load {
            Load::Layer => assert_eq!(preload, 0, "{name}"),
            // Both: the preload export is outermost; the layer's nested call passes straight through.
            Load::Preload | Load::Both => assert_eq!(layer, 0, "{name} {load:?}"),
            Load::None => unreachable!(),
        }
        let counts = r.counts();
        assert!(!counts.is_empty(), "{name} {load:?}");
        match &seen {
            None => seen = Some(counts),
            Some(first) => assert_eq!(&counts, first, "{name}: {load:?} saw different calls"),
        }
    }
    seen.unwrap()
}

#[test]
fn buffers_program_is_unchanged_in_every_mode() {
    let counts = same_everywhere("buffers", &[]);
    assert_eq!(counts["clCreateBuffer"], 8);
    assert_eq!(counts["clEnqueueMapBuffer"], 4);
    assert_eq!(counts["clEnqueueMigrateMemObjects"], 3);
    assert_eq!(counts["clCreateSubBuffer"], 1);
    assert_eq!(counts["clEnqueueWriteBufferRect"], 1);
}

#[test]
fn svm_events_program_is_unchanged_in_every_mode() {
    let counts = same_everywhere("svm_events", &[]);
    assert_eq!(counts["clSVMAlloc"], 2);
    assert_eq!(counts["clEnqueueSVMMemcpy"], 3);
    assert_eq!(counts["clSetEventCallback"], 1);
    assert_eq!(counts["clCreateUserEvent"], 1);
}

#[test]
fn four_threads_each_call_seen_exactly_once() {
    let counts = same_everywhere("threads", &[]);
    assert_eq!(counts["clEnqueueWriteBuffer"], 400);
    assert_eq!(counts["clEnqueueReadBuffer"], 400);
    assert_eq!(counts["clCreateCommandQueueWithProperties"], 4);
    let r = run(program("threads"), Load::Both, &[]);
    let reports = r.reports();
    assert!(reports[0].contains("on 5 thread(s)"), "{reports:?}");
}

#[test]
fn invalid_calls_return_the_drivers_errors() {
    let counts = same_everywhere("invalid", &[]);
    assert!(counts["clCreateBuffer"] >= 9);
    // The program prints its codes; spot-check a few against the spec so the comparison means something.
    let out = run(program("invalid"), Load::Both, &[]).stdout;
    for expected in [
        "clGetDeviceInfo(NULL device)             -33",
        "clCreateBuffer(size 0)                   -61 null",
        "clEnqueueWriteBuffer(NULL queue)         -36",
        "clEnqueueCopyBuffer(overlap)             -8",
        "clEnqueueReadBuffer(wait list NULL)      -57",
        "clBuildProgram(syntax error)             -11",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
}

#[test]
fn extension_functions_are_wrapped_per_platform() {
    let vendors = vendors_dir(true);
    let env = [("OCL_ICD_VENDORS", vendors.to_str().unwrap())];
    let counts = same_everywhere("extensions", &env);
    let out = run(program("extensions"), Load::None, &env).stdout;
    assert!(out.contains("platform clxfer test ICD"), "{out}");
    assert!(
        out.contains("usm: fill+copy ok, back[1023]=0x1234"),
        "{out}"
    );
    // The program's USM calls reached clxfer through its wrappers, and still the driver.
    assert_eq!(counts["clHostMemAllocINTEL"], 2);
    assert_eq!(counts["clEnqueueMemcpyINTEL"], 3);
    assert_eq!(counts["clEnqueueMemFillINTEL"], 1);
    assert_eq!(counts["clMemFreeINTEL"], 3);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(program("extensions"), load, &env);
        assert_eq!(
            r.via().unwrap().2,
            11,
            "{load:?}: extension calls\n{}",
            r.stderr
        );
    }
}

#[test]
fn without_a_loader_preload_opens_one_or_fails_like_no_platforms() {
    let prog = program("no_loader");
    // dlsym(RTLD_NEXT) finds nothing; dlopen("libOpenCL.so.1") finds the real loader.
    let r = run(&prog, Load::None, &[]);
    assert!(
        r.stdout.starts_with("clGetPlatformIDs -> 0, platforms 1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("clCreateContextFromType -> context, 0"),
        "{}",
        r.stdout
    );
    for lib in [
        "/nonexistent/libOpenCL.so.1".to_string(),
        layer_lib().display().to_string(),
    ] {
        let r = run(&prog, Load::None, &[("CLXFER_OPENCL_LIB", &lib)]);
        assert_eq!(r.code, Some(0));
        assert_eq!(
            r.stdout,
            "clGetPlatformIDs -> -1001, platforms 0\nclCreateContextFromType -> null, -32\n",
            "CLXFER_OPENCL_LIB={lib}"
        );
        let why = r.one_line("no OpenCL library");
        assert!(why.contains(&lib), "{why}");
    }
}

#[test]
fn a_panic_inside_clxfer_disables_it_and_the_program_is_unaffected() {
    let prog = program("buffers");
    let plain = run(&prog, Load::None, &[]);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(
            &prog,
            load,
            &[("CLXFER_TEST_PANIC_AT", "clEnqueueWriteBuffer")],
        );
        assert_eq!(r.code, Some(0), "{load:?}\n{}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        let error = r.one_line("internal error");
        assert!(
            error.contains("clEnqueueWriteBuffer") && error.contains("disabled itself"),
            "{load:?}: {error}"
        );
        assert!(
            !r.stderr.contains("panicked at"),
            "the default panic message leaked: {}",
            r.stderr
        );
        // Counting stopped at the first write: nothing after it was seen.
        let counts = r.counts();
        assert_eq!(counts.get("clEnqueueWriteBuffer"), Some(&1), "{load:?}");
        assert_eq!(counts.get("clReleaseContext"), None, "{load:?}");
    }
}

#[test]
fn bad_env_values_warn_once_and_use_defaults() {
    let prog = program("threads");
    let plain = run(&prog, Load::None, &[]);
    for (var, value, accepted) in [
        ("CLXFER_MODE", "fast", "trace|summary|off"),
        ("CLXFER_LOG", "loud", "warn|info|debug"),
        ("CLXFER_BUFFER_MIB", "0", "from 1 to 4096"),
        ("CLXFER_BUFFER_MIB", "lots", "from 1 to 4096"),
    ] {
        let r = run(&prog, Load::Both, &[(var, value)]);
        assert_eq!(r.stdout, plain.stdout);
        let warning = r.one_line(var);
        assert!(warning.contains(accepted), "{warning}");
    }
}

#[test]
fn mode_off_forwards_and_records_nothing() {
    let prog = program("svm_events");
    let plain = run(&prog, Load::None, &[]);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(&prog, load, &[("CLXFER_MODE", "off")]);
        assert_eq!(r.stdout, plain.stdout);
        assert!(r.via().is_none(), "{load:?}: {}", r.stderr);
    }
}

#[test]
fn nothing_on_stdout_and_quiet_by_default() {
    let prog = program("threads");
    let plain = run(&prog, Load::None, &[]);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let mut cmd = command(&prog, load);
        cmd.env_remove("CLXFER_LOG");
        let r = run_cmd(cmd, std::time::Duration::from_secs(120));
        assert_eq!(r.stdout, plain.stdout);
        assert!(r.clxfer_lines().is_empty(), "{load:?}: {}", r.stderr);
    }
}

#[test]
fn library_does_not_need_libopencl() {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(layer_lib())
        .output()
        .expect("readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(NEEDED)"), "{text}");
    assert!(
        !text.contains("libOpenCL"),
        "libclxfer.so must not link the loader:\n{text}"
    );
}

#[test]
fn library_exports_every_core_entry_point_and_the_layer_api() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(layer_lib())
        .output()
        .expect("nm");
    let text = String::from_utf8_lossy(&out.stdout);
    let exported: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let core: Vec<&str> = Api::ALL
        .iter()
        .filter(|a| a.slot().is_some())
        .map(|a| a.name())
        .collect();
    assert_eq!(core.len(), 133);
    for name in core.iter().chain(&[
        "clGetLayerInfo",
        "clInitLayer",
        "clInitLayerWithProperties",
        "clDeinitLayer",
    ]) {
        assert!(exported.contains(name), "{name} not exported");
    }
    // Extension wrappers are handed out, never exported (exporting them would shadow drivers).
    for api in Api::ALL.iter().filter(|a| a.slot().is_none()) {
        assert!(!exported.contains(&api.name()), "{} exported", api.name());
    }
}

#[test]
fn every_core_entry_point_is_one_that_the_system_loader_exports() {
    // The list must match what programs can link against: ocl-icd's exports.
    let out = Command::new("nm")
        .args([
            "-D",
            "--defined-only",
            "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1",
        ])
        .output()
        .expect("nm");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut loader: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| n.starts_with("cl"))
        .map(|n| n.split('@').next().unwrap().to_string())
        .collect();
    loader.sort();
    let mut ours: Vec<String> = Api::ALL
        .iter()
        .filter(|a| a.slot().is_some())
        .map(|a| a.name().to_string())
        .collect();
    ours.sort();
    assert_eq!(ours, loader);
}

#[test]
fn layer_api_as_the_khronos_loader_calls_it() {
    // num_entries below, at and above ocl-icd's 149; the table ends at an inaccessible page, so a
    // read past num_entries would crash the run.
    for n in [10, 149, 150] {
        let mut cmd = command(program("fake_loader"), Load::None);
        cmd.arg(layer_lib()).arg(n.to_string());
        let r = run_cmd(cmd, std::time::Duration::from_secs(60));
        assert_eq!(r.code, Some(0), "n={n}\n{}{}", r.stdout, r.stderr);
        let expected = format!(
            "version: 0 100 size 4\nname: 0 clxfer: OpenCL transfer tracer\nname too small: -30\n\
             unknown: -30\ninit: 0 entries {n}\nslot 0 wrapped: 1, NULL slots kept NULL: 1\n\
             call through table: 0 count 7, target called 1 time(s)\ndeinit: 0\ndone\n"
        );
        assert_eq!(r.stdout, expected, "n={n}");
        // Finished in clDeinitLayer, once; no atexit handler on this path.
        assert_eq!(
            r.reports(),
            ["clxfer: saw 1 OpenCL calls on 1 thread(s) (via preload 0, layer 1, extension 0)"]
        );
        assert!(
            r.stderr.contains("clInitLayerWithProperties"),
            "{}",
            r.stderr
        );
        // The trace is finished in clDeinitLayer too, before the loader unloads clxfer.
        assert_eq!(r.traces.len(), 1, "n={n}");
        let trace = clxfer::trace::read::read_file(&r.traces[0]).unwrap();
        assert!(trace.closed, "n={n}: trace not closed");
    }
}

#[test]
fn after_fork_each_process_reports_only_its_own_calls_once() {
    let prog = program("fork");
    let plain = run(&prog, Load::None, &[]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(&prog, load, &[]);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        let reports = r.reports();
        assert_eq!(
            reports.len(),
            2,
            "{load:?}: one report per process that made calls\n{}",
            r.stderr
        );
        // The child's report holds its three calls and nothing of the parent's.
        assert!(
            reports
                .iter()
                .any(|l| l.starts_with("clxfer: saw 3 OpenCL calls")),
            "{load:?}: {reports:?}"
        );
        let writes = r.stderr.matches("clEnqueueWriteBuffer=1").count();
        assert_eq!(
            writes, 1,
            "{load:?}: the parent's write was reported once\n{}",
            r.stderr
        );
        // Summary mode: the read still waiting at the fork is the parent's; the child, which
        // moved nothing, has no summary.
        let r = run(&prog, load, &[("CLXFER_MODE", "summary")]);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        let summaries: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("clxfer summary"))
            .collect();
        assert_eq!(summaries.len(), 1, "{load:?}\n{}", r.stderr);
        // Both reads in the parent's, the gated one included.
        let reads = |l: &str| l.split_whitespace().take(3).eq(["D2H", "host-copy", "2"]);
        assert!(r.stderr.lines().any(reads), "{load:?}\n{}", r.stderr);
    }
}
